#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x8_qsi8c32p8x8_1x8_neon_dotprod.h"

#include "kernels/arm/neon_common.h"
#include "kernels/arm/neon_qloops.h"
#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"
#include "kernels/ref/rhs_pack_nxk_qsi8c32pscalef16_qsi8c32.h"

namespace qmm {
namespace {

constexpr size_t kNr = 8;
constexpr size_t kLhsBlock = kBlock + 2;   // 1 row: f16 scale + 32 int8
constexpr size_t kRhsData = kNr * kBlock;  // 8 rows x 32 int8 per block; the scales follow all data

TileParams params(size_t) { return {1, kNr, 8, 1, 1, kNr}; }

// One 8-column panel of one row: columns 0..3 in *c0, 4..7 in *c1 (unclamped).
void dot_panel(size_t blocks, const uint8_t* lhs, const uint8_t* rhs, float32x4_t* c0, float32x4_t* c1) {
  const uint8_t* scales = rhs + blocks * kRhsData;
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  for (size_t b = 0; b < blocks; ++b, lhs += kLhsBlock, rhs += kRhsData, scales += kNr * 2) {
    const float s_lhs = neon::f16_to_f32(lhs);
    // iacc[p]: columns 2p, 2p+1, two partial-sum lanes each.
    int32x4_t iacc[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
    for (size_t c = 0; c < 4; ++c) {  // chunk c: elements 8c..8c+7
      const int8x16_t a = neon::load_dup8(lhs + 2 + c * 8);
      for (size_t p = 0; p < 4; ++p) iacc[p] = vdotq_s32(iacc[p], neon::load_s8(rhs + c * 64 + p * 16), a);
    }
    const float32x4_t sum0 = vcvtq_f32_s32(vpaddq_s32(iacc[0], iacc[1]));
    const float32x4_t sum1 = vcvtq_f32_s32(vpaddq_s32(iacc[2], iacc[3]));
    acc0 = vfmaq_f32(acc0, sum0, vmulq_n_f32(neon::f16x4_to_f32(scales), s_lhs));
    acc1 = vfmaq_f32(acc1, sum1, vmulq_n_f32(neon::f16x4_to_f32(scales + 8), s_lhs));
  }
  *c0 = acc0;
  *c1 = acc1;
}

// The row and panel loop is neon_qloops.h's.
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride, float clamp_min, float clamp_max) {
  neon::run_1x8<dot_panel, kNr * (kBlock + 2)>(m, n, k, lhs_packed, rhs_packed, dst, dst_stride, clamp_min, clamp_max);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p1x8_qsi8c32p8x8_1x8_neon_dotprod = {
    "matmul_clamp_f32_qsi8d32p1x8_qsi8c32p8x8_1x8_neon_dotprod", Isa::dotprod, WeightType::q8_0, true, params,
    &lhs_quant_pack_qsi8d32pscalef16_f32_neon, &rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, run};

}  // namespace qmm
