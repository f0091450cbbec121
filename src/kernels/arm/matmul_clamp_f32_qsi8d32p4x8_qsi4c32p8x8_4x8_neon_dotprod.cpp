#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_dotprod.h"

#include "kernels/arm/neon_common.h"
#include "kernels/arm/neon_qloops.h"
#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"
#include "kernels/ref/rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0.h"

namespace qmm {
namespace {

constexpr size_t kMr = 4, kNr = 8;
constexpr size_t kLhsBlock = kMr * (kBlock + 2);      // 4 f16 scales + 4 x 32 int8
constexpr size_t kRhsBlock = kNr * (kBlock / 2 + 2);  // 8 f16 scales + 8 x 16 bytes

static_assert(kMr == neon::kQMr && kNr == neon::kQNr && kLhsBlock == neon::kQLhsBlock);

TileParams params(size_t) { return {kMr, kNr, 16, 2, kMr, kNr}; }

// One 4x8 tile over all blocks: acc[j] = column j, rows 0..3 in the lanes (unclamped).
void tile(size_t blocks, const uint8_t* lhs, const uint8_t* rhs, float32x4_t acc[kNr]) {
  for (size_t j = 0; j < kNr; ++j) acc[j] = vdupq_n_f32(0.0f);
  for (size_t b = 0; b < blocks; ++b, lhs += kLhsBlock, rhs += kRhsBlock) {
    // a[g]: the 4 rows' k-group g (elements 4g..4g+3), one row per lane: chunk c holds groups
    // 2c, 2c+1 of rows 0,1 (16 bytes) then of rows 2,3; UZP1/UZP2 on 32-bit lanes sort them.
    int8x16_t a[8];
    for (size_t c = 0; c < 4; ++c) {
      const int32x4_t x0 = vreinterpretq_s32_u8(vld1q_u8(lhs + kMr * 2 + c * 32));
      const int32x4_t x1 = vreinterpretq_s32_u8(vld1q_u8(lhs + kMr * 2 + c * 32 + 16));
      a[2 * c] = vreinterpretq_s8_s32(vuzp1q_s32(x0, x1));
      a[2 * c + 1] = vreinterpretq_s8_s32(vuzp2q_s32(x0, x1));
    }
    int32x4_t iacc[kNr];
    for (size_t j = 0; j < kNr; ++j) iacc[j] = vdupq_n_s32(0);
    const uint8_t* w = rhs + kNr * 2;
#pragma GCC unroll 2
    for (size_t s = 0; s < 2; ++s) {
      for (size_t p = 0; p < 4; ++p) {
        // lanes: column 2p groups 2s, 2s+1 | column 2p+1 groups 2s, 2s+1 (high nibbles: +4 groups)
        const int8x16_t wv = neon::load_s8(w + s * 64 + p * 16);
        const int8x16_t lo = neon::nibbles_lo(wv), hi = neon::nibbles_hi(wv);
        iacc[2 * p] = vdotq_laneq_s32(iacc[2 * p], a[2 * s], lo, 0);
        iacc[2 * p] = vdotq_laneq_s32(iacc[2 * p], a[2 * s + 1], lo, 1);
        iacc[2 * p + 1] = vdotq_laneq_s32(iacc[2 * p + 1], a[2 * s], lo, 2);
        iacc[2 * p + 1] = vdotq_laneq_s32(iacc[2 * p + 1], a[2 * s + 1], lo, 3);
        iacc[2 * p] = vdotq_laneq_s32(iacc[2 * p], a[4 + 2 * s], hi, 0);
        iacc[2 * p] = vdotq_laneq_s32(iacc[2 * p], a[5 + 2 * s], hi, 1);
        iacc[2 * p + 1] = vdotq_laneq_s32(iacc[2 * p + 1], a[4 + 2 * s], hi, 2);
        iacc[2 * p + 1] = vdotq_laneq_s32(iacc[2 * p + 1], a[5 + 2 * s], hi, 3);
      }
    }
    const float32x4_t s_lhs = neon::f16x4_to_f32(lhs);
    float s_rhs[kNr];
    vst1q_f32(s_rhs, neon::f16x4_to_f32(rhs));
    vst1q_f32(s_rhs + 4, neon::f16x4_to_f32(rhs + 8));
    for (size_t j = 0; j < kNr; ++j) {
      acc[j] = vfmaq_f32(acc[j], vcvtq_n_f32_s32(iacc[j], 4), vmulq_n_f32(s_lhs, s_rhs[j]));
    }
  }
}

// The tile loop is neon_qloops.h's.
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride, float clamp_min, float clamp_max) {
  neon::run_4x8<tile, neon::rows_dotprod, kRhsBlock>(m, n, k, lhs_packed, rhs_packed, dst, dst_stride,
                                                     clamp_min, clamp_max);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_dotprod = {
    "matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_dotprod", Isa::dotprod, WeightType::q4_0, false, params,
    &lhs_quant_pack_qsi8d32pscalef16_f32_neon, &rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0, run};

}  // namespace qmm
