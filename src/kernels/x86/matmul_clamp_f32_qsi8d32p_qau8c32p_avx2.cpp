#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau8c32p_avx2.h"

#include "kernels/x86/avx2_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/rhs_pack_nxk_qau8c32pscalef16_qsi8c32.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm {
namespace {

constexpr size_t kNr = 8;
constexpr size_t kRhsBlock = kNr * 34;  // bytes per block in an RHS panel

TileParams gemm_params(size_t) { return {4, kNr, 4, 1, 4, kNr}; }
TileParams gemv_params(size_t) { return {1, kNr, 4, 1, 1, kNr}; }

// What a 32-block costs; the GEMM and GEMV loops are x86_qloops.h's.
// Weights are stored w + 128: each vector is flipped back to signed, then |w| · sign(a, w)
// feeds vpmaddubsw's u8 x s8, and vpmaddwd by 1 sums to int32 at once (int16 would overflow
// over a block).
struct Q8 {
  static constexpr size_t kRhsBlock = qmm::kRhsBlock, kScaleOffset = 32 * kNr;

  // R rows x C panels (`stride` bytes apart; the GEMM takes 4 x 2, the GEMV 1 x 4); the
  // activations are 4-byte chunks, broadcast once for the C panels.
  template <size_t R, size_t C, size_t RL = R>
  static void dot(const uint8_t* w, size_t stride, const uint8_t* a, __m256i s[C][R]) {
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    const __m256i ones = _mm256_set1_epi16(1);
    for (size_t c = 0; c < C; ++c)
      for (size_t r = 0; r < R; ++r) s[c][r] = _mm256_setzero_si256();
    // Kept a loop: unrolled, GCC hoists every product first and spills them.
#pragma GCC unroll 1
    for (size_t v = 0; v < 8; ++v) {
      __m256i ws[C], wabs[C];
      for (size_t c = 0; c < C; ++c) {
        ws[c] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + c * stride + 32 * v)), flip);
        wabs[c] = _mm256_abs_epi8(ws[c]);
      }
      for (size_t r = 0; r < R; ++r) {
        const __m256i ar = avx2::broadcast4(a + 4 * RL * v + 4 * r);
        for (size_t c = 0; c < C; ++c)
          s[c][r] = _mm256_add_epi32(s[c][r], _mm256_madd_epi16(_mm256_maddubs_epi16(wabs[c], _mm256_sign_epi8(ar, ws[c])), ones));
      }
    }
  }
};

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  x86q::gemm<avx2::Ymm, Q8, 4, 2>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<avx2::Ymm, Q8>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_qau8c32p8x4_4x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p4x4_qau8c32p8x4_4x8_avx2_maddubs", Isa::avx2, WeightType::q8_0, false, gemm_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p8x4_1x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p1x4_qau8c32p8x4_1x8_avx2_maddubs", Isa::avx2, WeightType::q8_0, true, gemv_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemv};

}  // namespace qmm
