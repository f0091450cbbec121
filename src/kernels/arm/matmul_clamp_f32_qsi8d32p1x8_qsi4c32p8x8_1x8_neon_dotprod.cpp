#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x8_qsi4c32p8x8_1x8_neon_dotprod.h"

#include "kernels/arm/neon_common.h"
#include "kernels/arm/neon_qloops.h"
#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"
#include "kernels/ref/rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0.h"

namespace qmm {
namespace {

constexpr size_t kNr = 8;
constexpr size_t kLhsBlock = kBlock + 2;             // 1 row: f16 scale + 32 int8
constexpr size_t kRhsBlock = kNr * (kBlock / 2 + 2);  // 8 rows: 8 f16 scales + 8 x 16 bytes

TileParams params(size_t) { return {1, kNr, 16, 2, 1, kNr}; }

// One 8-column panel of one row: returns columns 0..3 in *c0 and 4..7 in *c1 (unclamped).
void dot_panel(size_t blocks, const uint8_t* lhs, const uint8_t* rhs, float32x4_t* c0, float32x4_t* c1) {
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  for (size_t b = 0; b < blocks; ++b, lhs += kLhsBlock, rhs += kRhsBlock) {
    const float s_lhs = neon::f16_to_f32(lhs);
    const int8x16_t a0 = neon::load_dup8(lhs + 2), a1 = neon::load_dup8(lhs + 10);
    const int8x16_t a2 = neon::load_dup8(lhs + 18), a3 = neon::load_dup8(lhs + 26);
    const uint8_t* w = rhs + kNr * 2;
    // iacc[p]: columns 2p, 2p+1, two partial-sum lanes each.
    int32x4_t iacc[4];
    for (int p = 0; p < 4; ++p) {
      const int8x16_t w0 = neon::load_s8(w + p * 16);       // segment 0: elements 0..7 | 16..23
      const int8x16_t w1 = neon::load_s8(w + 64 + p * 16);  // segment 1: elements 8..15 | 24..31
      int32x4_t acc = vdotq_s32(vdupq_n_s32(0), neon::nibbles_lo(w0), a0);
      acc = vdotq_s32(acc, neon::nibbles_lo(w1), a1);
      acc = vdotq_s32(acc, neon::nibbles_hi(w0), a2);
      iacc[p] = vdotq_s32(acc, neon::nibbles_hi(w1), a3);
    }
    const float32x4_t sum0 = vcvtq_n_f32_s32(vpaddq_s32(iacc[0], iacc[1]), 4);
    const float32x4_t sum1 = vcvtq_n_f32_s32(vpaddq_s32(iacc[2], iacc[3]), 4);
    acc0 = vfmaq_f32(acc0, sum0, vmulq_n_f32(neon::f16x4_to_f32(rhs), s_lhs));
    acc1 = vfmaq_f32(acc1, sum1, vmulq_n_f32(neon::f16x4_to_f32(rhs + 8), s_lhs));
  }
  *c0 = acc0;
  *c1 = acc1;
}

// The row and panel loop is neon_qloops.h's.
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride, float clamp_min, float clamp_max) {
  neon::run_1x8<dot_panel, kRhsBlock>(m, n, k, lhs_packed, rhs_packed, dst, dst_stride, clamp_min, clamp_max);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p1x8_qsi4c32p8x8_1x8_neon_dotprod = {
    "matmul_clamp_f32_qsi8d32p1x8_qsi4c32p8x8_1x8_neon_dotprod", Isa::dotprod, WeightType::q4_0, true, params,
    &lhs_quant_pack_qsi8d32pscalef16_f32_neon, &rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0, run};

}  // namespace qmm
