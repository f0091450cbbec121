// The F32-accumulating tiles shared by the AVX-512 float kernels (F16 and F32 weights).
// Include only from sources compiled with AVX-512 flags.
//
// Layouts (kernels/ref/pack_float_panels.h, kr = 1): LHS panel of mr rows, element (r, c) at
// c·mr + r; RHS panel of 16 rows, element (r, c) at c·16 + r — one zmm per k step (the same
// RHS as the AVX2 float kernels). Per k step the tile converts/loads the panel's 16 weights
// once and issues one FMA per LHS row with the row's value as an embedded broadcast
// ({1to16}), summing each output in k order.
#pragma once
#include "kernels/x86/avx512_util.h"

namespace qmm::avx512 {

constexpr size_t kFloatNr = 16;

struct WeightsF16 {
  static __m512 load(const void* panel, size_t idx) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(panel) + idx)));
  }
};
struct WeightsF32 {
  static __m512 load(const void* panel, size_t idx) { return _mm512_loadu_ps(static_cast<const float*>(panel) + idx); }
};

// R rows (a panel of mr >= R rows at lp) x 16 columns (one RHS panel at rp), all of k.
template <class W, size_t R>
inline void float_tile(const float* lp, size_t mr, const void* rp, size_t k, __m512 acc[R]) {
  for (size_t r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (size_t c = 0; c < k; ++c) {
    const __m512 w = W::load(rp, c * kFloatNr);
    for (size_t r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(lp[c * mr + r]), w, acc[r]);
  }
}

// P RHS panels x 1 row: P independent FMA chains hide the FMA latency.
template <class W, size_t P>
inline void float_gemv_panels(const float* x, const void* rp, size_t panel_elems, size_t k, __m512 acc[P]) {
  for (size_t p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
  for (size_t c = 0; c < k; ++c) {
    const __m512 a = _mm512_set1_ps(x[c]);
    for (size_t p = 0; p < P; ++p) acc[p] = _mm512_fmadd_ps(a, W::load(rp, p * panel_elems + c * kFloatNr), acc[p]);
  }
}

template <class W, size_t R>
void float_gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, size_t welem, float* dst,
                size_t stride, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (size_t j0 = 0; j0 < n; j0 += kFloatNr) {
    const void* rp = static_cast<const uint8_t*>(rhs) + j0 * k * welem;
    const size_t cols = n - j0 < kFloatNr ? n - j0 : kFloatNr;
    for (size_t i0 = 0; i0 < m; i0 += R) {
      __m512 acc[R];
      float_tile<W, R>(static_cast<const float*>(lhs) + i0 * k, R, rp, k, acc);
      for (size_t r = 0; r < R && i0 + r < m; ++r) store_clamped(row_ptr(dst, stride, i0 + r) + j0, acc[r], cols, vlo, vhi);
    }
  }
}

template <class W>
void float_gemv(size_t n, size_t k, const float* x, const void* rhs, size_t welem, float* dst, float lo, float hi) {
  constexpr size_t P = 8;
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const size_t panel_elems = kFloatNr * k;
  size_t j0 = 0;
  for (; j0 + P * kFloatNr <= n; j0 += P * kFloatNr) {
    __m512 acc[P];
    float_gemv_panels<W, P>(x, static_cast<const uint8_t*>(rhs) + j0 * k * welem, panel_elems, k, acc);
    for (size_t p = 0; p < P; ++p) store_clamped(dst + j0 + p * kFloatNr, acc[p], kFloatNr, vlo, vhi);
  }
  for (; j0 < n; j0 += kFloatNr) {
    __m512 acc[1];
    float_gemv_panels<W, 1>(x, static_cast<const uint8_t*>(rhs) + j0 * k * welem, panel_elems, k, acc);
    store_clamped(dst + j0, acc[0], n - j0 < kFloatNr ? n - j0 : kFloatNr, vlo, vhi);
  }
}

}  // namespace qmm::avx512
