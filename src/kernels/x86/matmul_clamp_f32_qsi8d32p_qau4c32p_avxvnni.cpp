#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avxvnni.h"

#include "kernels/x86/avx2_qloops.h"
#include "kernels/x86/avx2_util.h"
#include "kernels/x86/avxvnni_qloops.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0.h"

namespace qmm {
namespace {

constexpr size_t kPanelCols = 8;
constexpr size_t kPanelBlockBytes = kPanelCols * 18;  // bytes per block in an RHS panel

TileParams gemm_params(size_t) { return {4, kPanelCols, 4, 2, 4, kPanelCols}; }
TileParams gemv_params(size_t) { return {1, kPanelCols, 4, 2, 1, kPanelCols}; }

// The per-block dot product; the tile loops are shared (avx2_qloops.h, avxvnni_qloops.h).
struct Block {
  static constexpr size_t kNr = kPanelCols;
  static constexpr size_t kRhsBlock = kPanelBlockBytes;
  static constexpr size_t kScaleOffset = 16 * kPanelCols;  // the block's nr f16 scales follow its data
  // Σ_{block} (u − 8)·a (int32 per column) for R rows.
  template <size_t R>
  static void dot(const uint8_t* w, const uint8_t* a, __m256i s[R]) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (size_t r = 0; r < R; ++r) s[r] = _mm256_madd_epi16(_mm256_set1_epi32(avx2::load_i32(a + 36 * R + 4 * r)), _mm256_set1_epi16(1));
#pragma GCC unroll 1
    for (size_t v = 0; v < 4; ++v) {
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * v));
      const __m256i lo = _mm256_and_si256(wv, m4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(wv, 4), m4);
      for (size_t r = 0; r < R; ++r) {
        s[r] = _mm256_dpbusd_avx_epi32(s[r], lo, _mm256_set1_epi32(avx2::load_i32(a + 4 * R * v + 4 * r)));
        s[r] = _mm256_dpbusd_avx_epi32(s[r], hi, _mm256_set1_epi32(avx2::load_i32(a + 4 * R * (v + 4) + 4 * r)));
      }
    }
  }
};

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  avx2::qgemm<Block>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  avxvnni_loops::gemv_loop<Block>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_qau4c32p8x4_4x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p4x4_qau4c32p8x4_4x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q4_0, false,
    gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau4c32p8x4_1x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_qau4c32p8x4_1x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q4_0, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemv};

}  // namespace qmm
