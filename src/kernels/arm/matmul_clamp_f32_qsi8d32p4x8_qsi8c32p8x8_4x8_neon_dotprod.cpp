#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_dotprod.h"

#include "kernels/arm/neon_common.h"
#include "kernels/ref/lhs_quant_pack_qsi8d32pscalef16_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi8c32pscalef16_qsi8c32.h"

namespace qmm {
namespace {

constexpr size_t kMr = 4, kNr = 8;
constexpr size_t kLhsBlock = kMr * (kBlock + 2);  // 4 f16 scales + 4 x 32 int8
constexpr size_t kRhsData = kNr * kBlock;         // 8 rows x 32 int8 per block; the scales follow all data

TileParams params(size_t) { return {kMr, kNr, 8, 1, kMr, kNr}; }

// One 4x8 tile over all blocks: acc[i][h] = row i, columns 4h..4h+3 (unclamped).
void tile(size_t blocks, const uint8_t* lhs, const uint8_t* rhs, float32x4_t acc[kMr][2]) {
  const uint8_t* scales = rhs + blocks * kRhsData;
  for (size_t i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = vdupq_n_f32(0.0f);
  for (size_t b = 0; b < blocks; ++b, lhs += kLhsBlock, rhs += kRhsData, scales += kNr * 2) {
    // iacc[i][p]: row i, columns 2p and 2p+1, two partial-sum lanes per column.
    int32x4_t iacc[kMr][4];
    for (size_t i = 0; i < kMr; ++i) {
      for (size_t p = 0; p < 4; ++p) iacc[i][p] = vdupq_n_s32(0);
    }
    for (size_t c = 0; c < 4; ++c) {  // chunk c: elements 8c..8c+7
      int8x16_t wv[4];
      for (size_t p = 0; p < 4; ++p) wv[p] = neon::load_s8(rhs + c * 64 + p * 16);
      for (size_t i = 0; i < kMr; ++i) {
        const int8x16_t a = neon::load_dup8(lhs + kMr * 2 + c * 32 + i * 8);
        for (size_t p = 0; p < 4; ++p) iacc[i][p] = vdotq_s32(iacc[i][p], wv[p], a);
      }
    }
    float s_lhs[kMr];
    vst1q_f32(s_lhs, neon::f16x4_to_f32(lhs));
    const float32x4_t s_rhs0 = neon::f16x4_to_f32(scales), s_rhs1 = neon::f16x4_to_f32(scales + 8);
    for (size_t i = 0; i < kMr; ++i) {
      const float32x4_t sum0 = vcvtq_f32_s32(vpaddq_s32(iacc[i][0], iacc[i][1]));
      const float32x4_t sum1 = vcvtq_f32_s32(vpaddq_s32(iacc[i][2], iacc[i][3]));
      acc[i][0] = vfmaq_f32(acc[i][0], sum0, vmulq_n_f32(s_rhs0, s_lhs[i]));
      acc[i][1] = vfmaq_f32(acc[i][1], sum1, vmulq_n_f32(s_rhs1, s_lhs[i]));
    }
  }
}

void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride, float clamp_min, float clamp_max) {
  const size_t blocks = k / kBlock;
  const size_t panel_bytes = blocks * kNr * (kBlock + 2);
  const float32x4_t lo = vdupq_n_f32(clamp_min), hi = vdupq_n_f32(clamp_max);
  for (size_t i0 = 0; i0 < m; i0 += kMr) {
    const uint8_t* lhs = static_cast<const uint8_t*>(lhs_packed) + i0 / kMr * blocks * kLhsBlock;
    for (size_t j = 0; j < n; j += kNr) {
      const uint8_t* rhs = static_cast<const uint8_t*>(rhs_packed) + j / kNr * panel_bytes;
      float32x4_t acc[kMr][2];
      tile(blocks, lhs, rhs, acc);
      for (size_t i = 0; i < kMr && i0 + i < m; ++i) {
        neon::store_row8(neon::row_ptr(dst, dst_stride, i0 + i) + j, neon::clamp(acc[i][0], lo, hi),
                         neon::clamp(acc[i][1], lo, hi), n - j);
      }
    }
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_dotprod = {
    "matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_dotprod", Isa::dotprod, WeightType::q8_0, false, params,
    &lhs_quant_pack_qsi8d32pscalef16_f32, &rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, run};

}  // namespace qmm
