#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_i8mm.h"

#include "kernels/arm/neon_common.h"
#include "kernels/arm/neon_qloops.h"
#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"
#include "kernels/ref/rhs_pack_nxk_qsi8c32pscalef16_qsi8c32.h"

namespace qmm {
namespace {

constexpr size_t kMr = 4, kNr = 8;
constexpr size_t kLhsBlock = kMr * (kBlock + 2);  // 4 f16 scales + 4 x 32 int8
constexpr size_t kRhsData = kNr * kBlock;         // 8 rows x 32 int8 per block; the scales follow all data

static_assert(kMr == neon::kQMr && kNr == neon::kQNr && kLhsBlock == neon::kQLhsBlock);

TileParams params(size_t) { return {kMr, kNr, 8, 1, kMr, kNr}; }

// One 4x8 tile over all blocks. acc[4h + p] is a 2x2 block: rows 2h, 2h+1 x columns 2p, 2p+1,
// lanes (2h, 2p), (2h, 2p+1), (2h+1, 2p), (2h+1, 2p+1).
void tile(size_t blocks, const uint8_t* lhs, const uint8_t* rhs, float32x4_t acc[8]) {
  const uint8_t* scales = rhs + blocks * kRhsData;
  for (size_t h = 0; h < 2; ++h) {
    for (size_t p = 0; p < 4; ++p) acc[4 * h + p] = vdupq_n_f32(0.0f);
  }
  for (size_t b = 0; b < blocks; ++b, lhs += kLhsBlock, rhs += kRhsData, scales += kNr * 2) {
    int32x4_t iacc[2][4];
    for (size_t h = 0; h < 2; ++h) {
      for (size_t p = 0; p < 4; ++p) iacc[h][p] = vdupq_n_s32(0);
    }
    for (size_t c = 0; c < 4; ++c) {  // chunk c: elements 8c..8c+7
      const int8x16_t a0 = neon::load_s8(lhs + kMr * 2 + c * 32), a1 = neon::load_s8(lhs + kMr * 2 + c * 32 + 16);
      for (size_t p = 0; p < 4; ++p) {
        const int8x16_t wv = neon::load_s8(rhs + c * 64 + p * 16);
        iacc[0][p] = vmmlaq_s32(iacc[0][p], a0, wv);
        iacc[1][p] = vmmlaq_s32(iacc[1][p], a1, wv);
      }
    }
    // Scales in the 2x2 lane pattern: lhs (s0 s0 s1 s1), (s2 s2 s3 s3); rhs (t2p t2p+1 t2p t2p+1).
    const float32x4_t s_lhs = neon::f16x4_to_f32(lhs);
    const float32x4_t sl[2] = {vzip1q_f32(s_lhs, s_lhs), vzip2q_f32(s_lhs, s_lhs)};
    const float32x4_t t0 = neon::f16x4_to_f32(scales);
    const float32x4_t t1 = neon::f16x4_to_f32(scales + 8);
    const float32x4_t sr[4] = {neon::dup_pair(t0, 0), neon::dup_pair(t0, 1), neon::dup_pair(t1, 0),
                               neon::dup_pair(t1, 1)};
    for (size_t h = 0; h < 2; ++h) {
      for (size_t p = 0; p < 4; ++p) {
        acc[4 * h + p] = vfmaq_f32(acc[4 * h + p], vcvtq_f32_s32(iacc[h][p]), vmulq_f32(sl[h], sr[p]));
      }
    }
  }
}

// The tile loop is neon_qloops.h's.
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride, float clamp_min, float clamp_max) {
  neon::run_4x8<tile, neon::rows_i8mm, kNr * (kBlock + 2)>(m, n, k, lhs_packed, rhs_packed, dst, dst_stride,
                                                           clamp_min, clamp_max);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_i8mm = {
    "matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_i8mm", Isa::i8mm, WeightType::q8_0, false, params,
    &lhs_quant_pack_qsi8d32pscalef16_f32_neon, &rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, run};

}  // namespace qmm
