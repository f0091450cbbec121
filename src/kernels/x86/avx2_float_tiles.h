// The F32-accumulating tiles shared by the AVX2 float kernels (F16 and F32 weights). Include
// only from sources compiled with AVX2 + FMA + F16C flags.
//
// Layouts (kernels/ref/pack_float_panels.h, kr = 1): LHS panel of mr rows, element (r, c) at
// c·mr + r; RHS panel of 16 rows, element (r, c) at c·16 + r. Per k step the tile loads the
// panel's 16 weights (2 ymm, converted from f16 by vcvtph2ps where W is f16), broadcasts each
// LHS row's value and issues 2 FMAs per row, summing each output in k order.
#pragma once
#include "kernels/x86/avx2_util.h"

namespace qmm::avx2 {

constexpr size_t kFloatNr = 16;

struct WeightsF16 {
  static __m256 load(const void* panel, size_t idx) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(panel) + idx)));
  }
};
struct WeightsF32 {
  static __m256 load(const void* panel, size_t idx) { return _mm256_loadu_ps(static_cast<const float*>(panel) + idx); }
};

// R rows (a panel of mr >= R rows at lp) x 16 columns (one RHS panel at rp), all of k.
template <class W, size_t R>
inline void float_tile(const float* lp, size_t mr, const void* rp, size_t k, __m256 acc[R][2]) {
  for (size_t r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (size_t c = 0; c < k; ++c) {
    const __m256 w0 = W::load(rp, c * kFloatNr), w1 = W::load(rp, c * kFloatNr + 8);
    for (size_t r = 0; r < R; ++r) {
      const __m256 a = _mm256_broadcast_ss(lp + c * mr + r);
      acc[r][0] = _mm256_fmadd_ps(a, w0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, w1, acc[r][1]);
    }
  }
}

// P RHS panels (rp, rp + panel_elems, ...) x 1 row: P independent FMA chains per 8 columns,
// so the GEMV is not bound by FMA latency.
template <class W, size_t P>
inline void float_gemv_panels(const float* x, const void* rp, size_t panel_elems, size_t k, __m256 acc[P][2]) {
  for (size_t p = 0; p < P; ++p) acc[p][0] = acc[p][1] = _mm256_setzero_ps();
  for (size_t c = 0; c < k; ++c) {
    const __m256 a = _mm256_broadcast_ss(x + c);
    for (size_t p = 0; p < P; ++p) {
      acc[p][0] = _mm256_fmadd_ps(a, W::load(rp, p * panel_elems + c * kFloatNr), acc[p][0]);
      acc[p][1] = _mm256_fmadd_ps(a, W::load(rp, p * panel_elems + c * kFloatNr + 8), acc[p][1]);
    }
  }
}

inline void store_row16(float* dst, const __m256 acc[2], size_t cols, __m256 lo, __m256 hi) {
  store_clamped(dst, acc[0], cols < 8 ? cols : 8, lo, hi);
  if (cols > 8) store_clamped(dst + 8, acc[1], cols - 8, lo, hi);
}

// The whole GEMM over mr-row LHS panels and 16-row RHS panels of elements of size `welem`.
template <class W, size_t R>
void float_gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, size_t welem, float* dst,
                size_t stride, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (size_t j0 = 0; j0 < n; j0 += kFloatNr) {
    const void* rp = static_cast<const uint8_t*>(rhs) + j0 * k * welem;
    const size_t cols = n - j0 < kFloatNr ? n - j0 : kFloatNr;
    for (size_t i0 = 0; i0 < m; i0 += R) {
      __m256 acc[R][2];
      float_tile<W, R>(static_cast<const float*>(lhs) + i0 * k, R, rp, k, acc);
      for (size_t r = 0; r < R && i0 + r < m; ++r) store_row16(row_ptr(dst, stride, i0 + r) + j0, acc[r], cols, vlo, vhi);
    }
  }
}

template <class W>
void float_gemv(size_t n, size_t k, const float* x, const void* rhs, size_t welem, float* dst, float lo, float hi) {
  constexpr size_t P = 4;
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const size_t panel_elems = kFloatNr * k;
  size_t j0 = 0;
  for (; j0 + P * kFloatNr <= n; j0 += P * kFloatNr) {
    __m256 acc[P][2];
    float_gemv_panels<W, P>(x, static_cast<const uint8_t*>(rhs) + j0 * k * welem, panel_elems, k, acc);
    for (size_t p = 0; p < P; ++p) store_row16(dst + j0 + p * kFloatNr, acc[p], kFloatNr, vlo, vhi);
  }
  for (; j0 < n; j0 += kFloatNr) {
    __m256 acc[1][2];
    float_gemv_panels<W, 1>(x, static_cast<const uint8_t*>(rhs) + j0 * k * welem, panel_elems, k, acc);
    store_row16(dst + j0, acc[0], n - j0 < kFloatNr ? n - j0 : kFloatNr, vlo, vhi);
  }
}

}  // namespace qmm::avx2
