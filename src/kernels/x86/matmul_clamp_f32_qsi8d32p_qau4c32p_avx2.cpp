#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avx2.h"

#include "kernels/x86/avx2_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm {
namespace {

constexpr size_t kNr = 8;
constexpr size_t kRhsBlock = kNr * 18;  // bytes per block in an RHS panel

TileParams gemm_params(size_t) { return {4, kNr, 4, 2, 4, kNr}; }
TileParams gemv_params(size_t) { return {1, kNr, 4, 2, 1, kNr}; }

// What a 32-block costs; the GEMM and GEMV loops are x86_qloops.h's.
// The dot product gives Σ(u − 8)·a per column as int32: the int16 sums start at the LHS's
// −8·Σa lane pair and may wrap on the way; each lane's final value, over 16 products, is
// within ±16256.
struct Q4 {
  static constexpr size_t kRhsBlock = qmm::kRhsBlock, kScaleOffset = 16 * kNr;

  // R rows x C panels (`stride` bytes apart; the GEMM takes 4 x 2, the GEMV 1 x 4); the
  // activations are 4-byte chunks, broadcast once for the C panels.
  template <size_t R, size_t C, size_t RL = R>
  static void dot(const uint8_t* w, size_t stride, const uint8_t* a, __m256i s[C][R]) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (size_t r = 0; r < R; ++r) {
      const __m256i zp = avx2::broadcast4(a + 36 * RL + 4 * r);
      for (size_t c = 0; c < C; ++c) s[c][r] = zp;
    }
    // Kept a loop: unrolled, GCC hoists every product first and spills them.
#pragma GCC unroll 1
    for (size_t v = 0; v < 4; ++v) {
      __m256i lo[C], hi[C];
      for (size_t c = 0; c < C; ++c) {
        const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + c * stride + 32 * v));
        lo[c] = _mm256_and_si256(wv, m4);
        hi[c] = _mm256_and_si256(_mm256_srli_epi16(wv, 4), m4);
      }
      for (size_t r = 0; r < R; ++r) {  // (lo + hi) first: a shorter dependency chain on s
        const __m256i alo = avx2::broadcast4(a + 4 * RL * v + 4 * r);
        const __m256i ahi = avx2::broadcast4(a + 4 * RL * (v + 4) + 4 * r);
        for (size_t c = 0; c < C; ++c)
          s[c][r] = _mm256_add_epi16(s[c][r], _mm256_add_epi16(_mm256_maddubs_epi16(lo[c], alo), _mm256_maddubs_epi16(hi[c], ahi)));
      }
    }
    for (size_t c = 0; c < C; ++c)
      for (size_t r = 0; r < R; ++r) s[c][r] = _mm256_madd_epi16(s[c][r], _mm256_set1_epi16(1));
  }
};

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  x86q::gemm<avx2::Ymm, Q4, 4, 2>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<avx2::Ymm, Q4>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_qau4c32p8x4_4x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p4x4_qau4c32p8x4_4x8_avx2_maddubs", Isa::avx2, WeightType::q4_0, false, gemm_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau4c32p8x4_1x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p1x4_qau4c32p8x4_1x8_avx2_maddubs", Isa::avx2, WeightType::q4_0, true, gemv_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemv};

}  // namespace qmm
