#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau8c32p_avxvnni.h"

#include "kernels/x86/avx2_qloops.h"
#include "kernels/x86/avx2_util.h"
#include "kernels/x86/avxvnni_qloops.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/rhs_pack_nxk_qau8c32pscalef16_qsi8c32.h"

namespace qmm {
namespace {

constexpr size_t kPanelCols = 8;
constexpr size_t kPanelBlockBytes = kPanelCols * 34;  // bytes per block in an RHS panel

TileParams gemm_params(size_t) { return {4, kPanelCols, 4, 1, 4, kPanelCols}; }
TileParams gemv_params(size_t) { return {1, kPanelCols, 4, 1, 1, kPanelCols}; }

// The per-block dot product; the tile loops are shared (avx2_qloops.h, avxvnni_qloops.h).
struct Block {
  static constexpr size_t kNr = kPanelCols;
  static constexpr size_t kRhsBlock = kPanelBlockBytes;
  static constexpr size_t kScaleOffset = 32 * kPanelCols;  // the block's nr f16 scales follow its data
  // Σ_{block} (u − 128)·a (int32 per column) for R rows.
  template <size_t R>
  static void dot(const uint8_t* w, const uint8_t* a, __m256i s[R]) {
    for (size_t r = 0; r < R; ++r) s[r] = _mm256_madd_epi16(_mm256_set1_epi32(avx2::load_i32(a + 36 * R + 4 * r)), _mm256_set1_epi16(16));
#pragma GCC unroll 1
    for (size_t v = 0; v < 8; ++v) {
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * v));
      for (size_t r = 0; r < R; ++r) {
        s[r] = _mm256_dpbusd_avx_epi32(s[r], wv, _mm256_set1_epi32(avx2::load_i32(a + 4 * R * v + 4 * r)));
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

const Ukernel matmul_clamp_f32_qsi8d32p4x4_qau8c32p8x4_4x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p4x4_qau8c32p8x4_4x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q8_0, false,
    gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p8x4_1x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_qau8c32p8x4_1x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q8_0, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemv};

}  // namespace qmm
