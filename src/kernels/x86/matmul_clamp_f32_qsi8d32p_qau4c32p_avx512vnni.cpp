#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avx512vnni.h"

#include "kernels/x86/avx512_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0.h"

namespace qmm {
namespace {

constexpr size_t kNr = 16;
constexpr size_t kRhsBlock = kNr * 18;  // bytes per block in an RHS panel

TileParams gemm_params(size_t) { return {8, kNr, 4, 2, 8, kNr}; }
TileParams gemv_params(size_t) { return {1, kNr, 4, 2, 1, kNr}; }

// Σ_{block} (u − 8)·a (int32 per column) for R rows.
template <size_t R>
inline void block_dot(const uint8_t* w, const uint8_t* a, __m512i s[R]) {
  const __m512i m4 = _mm512_set1_epi8(0x0f);
  for (size_t r = 0; r < R; ++r) s[r] = _mm512_madd_epi16(_mm512_set1_epi32(avx512::load_i32(a + 36 * R + 4 * r)), _mm512_set1_epi16(1));
#pragma GCC unroll 1
  for (size_t v = 0; v < 4; ++v) {
    const __m512i wv = _mm512_loadu_si512(w + 64 * v);
    const __m512i lo = _mm512_and_si512(wv, m4);
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(wv, 4), m4);
    for (size_t r = 0; r < R; ++r) {
      s[r] = _mm512_dpbusd_epi32(s[r], lo, _mm512_set1_epi32(avx512::load_i32(a + 4 * R * v + 4 * r)));
      s[r] = _mm512_dpbusd_epi32(s[r], hi, _mm512_set1_epi32(avx512::load_i32(a + 4 * R * (v + 4) + 4 * r)));
    }
  }
}

template <size_t R>
inline __m512 block_finish(__m512 acc, __m512i s, __m512 sw, const uint8_t* a, size_t r) {
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(sw, avx512::broadcast_f32(a + 32 * R + 4 * r)), acc);
}

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  constexpr size_t R = 8;
  const size_t blocks = k / kBlock;
  const size_t lhs_panel = x86lhs::panel_bytes(R, k), rhs_panel = blocks * kRhsBlock;
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (size_t j0 = 0; j0 < n; j0 += kNr) {
    const uint8_t* rp = static_cast<const uint8_t*>(rhs) + j0 / kNr * rhs_panel;
    const size_t cols = n - j0 < kNr ? n - j0 : kNr;
    for (size_t i0 = 0; i0 < m; i0 += R) {
      const uint8_t* lp = static_cast<const uint8_t*>(lhs) + i0 / R * lhs_panel;
      __m512 acc[R];
      for (size_t r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* w = rp + b * kRhsBlock;
        const uint8_t* a = lp + b * R * x86lhs::kBlockBytes;
        __m512i s[R];
        block_dot<R>(w, a, s);
        const __m512 sw = avx512::load_f16x16(w + 16 * kNr);
        for (size_t r = 0; r < R; ++r) acc[r] = block_finish<R>(acc[r], s[r], sw, a, r);
      }
      for (size_t r = 0; r < R && i0 + r < m; ++r) {
        avx512::store_clamped(avx512::row_ptr(dst, stride, i0 + r) + j0, acc[r], cols, vlo, vhi);
      }
    }
  }
}

template <size_t P>
inline void gemv_panels(const uint8_t* rp, size_t rhs_panel, const uint8_t* lp, size_t blocks, __m512 acc[P]) {
  for (size_t p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* a = lp + b * x86lhs::kBlockBytes;
    for (size_t p = 0; p < P; ++p) {
      const uint8_t* w = rp + p * rhs_panel + b * kRhsBlock;
      __m512i s[1];
      block_dot<1>(w, a, s);
      acc[p] = block_finish<1>(acc[p], s[0], avx512::load_f16x16(w + 16 * kNr), a, 0);
    }
  }
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  const size_t blocks = k / kBlock, rhs_panel = blocks * kRhsBlock;
  const auto* lp = static_cast<const uint8_t*>(lhs);
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  size_t j0 = 0;
  for (; j0 + 2 * kNr <= n; j0 += 2 * kNr) {
    __m512 acc[2];
    gemv_panels<2>(static_cast<const uint8_t*>(rhs) + j0 / kNr * rhs_panel, rhs_panel, lp, blocks, acc);
    avx512::store_clamped(dst + j0, acc[0], kNr, vlo, vhi);
    avx512::store_clamped(dst + j0 + kNr, acc[1], kNr, vlo, vhi);
  }
  for (; j0 < n; j0 += kNr) {
    __m512 acc[1];
    gemv_panels<1>(static_cast<const uint8_t*>(rhs) + j0 / kNr * rhs_panel, rhs_panel, lp, blocks, acc);
    avx512::store_clamped(dst + j0, acc[0], n - j0 < kNr ? n - j0 : kNr, vlo, vhi);
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p8x4_qau4c32p16x4_8x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p8x4_qau4c32p16x4_8x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q4_0, false,
    gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau4c32p16x4_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_qau4c32p16x4_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q4_0, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemv};

}  // namespace qmm
