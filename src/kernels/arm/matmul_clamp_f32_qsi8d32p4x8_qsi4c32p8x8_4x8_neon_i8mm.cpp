#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_i8mm.h"

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

// One 4x8 tile over all blocks. acc[4h + p] is a 2x2 block: rows 2h, 2h+1 x columns 2p, 2p+1,
// lanes (2h, 2p), (2h, 2p+1), (2h+1, 2p), (2h+1, 2p+1).
void tile(size_t blocks, const uint8_t* lhs, const uint8_t* rhs, float32x4_t acc[8]) {
  for (size_t h = 0; h < 2; ++h) {
    for (size_t p = 0; p < 4; ++p) acc[4 * h + p] = vdupq_n_f32(0.0f);
  }
  for (size_t b = 0; b < blocks; ++b, lhs += kLhsBlock, rhs += kRhsBlock) {
    const uint8_t* a = lhs + kMr * 2;  // chunk c (elements 8c..8c+7), row pair h at c·32 + h·16
    const uint8_t* w = rhs + kNr * 2;  // segment s, column pair p at s·64 + p·16
    int32x4_t iacc[2][4];
    for (size_t h = 0; h < 2; ++h) {
      for (size_t p = 0; p < 4; ++p) iacc[h][p] = vdupq_n_s32(0);
    }
    for (size_t s = 0; s < 2; ++s) {
      const int8x16_t a_lo0 = neon::load_s8(a + s * 32), a_lo1 = neon::load_s8(a + s * 32 + 16);
      const int8x16_t a_hi0 = neon::load_s8(a + (2 + s) * 32), a_hi1 = neon::load_s8(a + (2 + s) * 32 + 16);
      for (size_t p = 0; p < 4; ++p) {
        const int8x16_t wv = neon::load_s8(w + s * 64 + p * 16);
        const int8x16_t w_lo = neon::nibbles_lo(wv), w_hi = neon::nibbles_hi(wv);
        iacc[0][p] = vmmlaq_s32(iacc[0][p], a_lo0, w_lo);
        iacc[1][p] = vmmlaq_s32(iacc[1][p], a_lo1, w_lo);
        iacc[0][p] = vmmlaq_s32(iacc[0][p], a_hi0, w_hi);
        iacc[1][p] = vmmlaq_s32(iacc[1][p], a_hi1, w_hi);
      }
    }
    // Scales in the 2x2 lane pattern: lhs (s0 s0 s1 s1), (s2 s2 s3 s3); rhs (t2p t2p+1 t2p t2p+1).
    const float32x4_t s_lhs = neon::f16x4_to_f32(lhs);
    const float32x4_t sl[2] = {vzip1q_f32(s_lhs, s_lhs), vzip2q_f32(s_lhs, s_lhs)};
    const float32x4_t t0 = neon::f16x4_to_f32(rhs);
    const float32x4_t t1 = neon::f16x4_to_f32(rhs + 8);
    const float32x4_t sr[4] = {neon::dup_pair(t0, 0), neon::dup_pair(t0, 1), neon::dup_pair(t1, 0),
                               neon::dup_pair(t1, 1)};
    for (size_t h = 0; h < 2; ++h) {
      for (size_t p = 0; p < 4; ++p) {
        acc[4 * h + p] = vfmaq_f32(acc[4 * h + p], vcvtq_n_f32_s32(iacc[h][p], 4), vmulq_f32(sl[h], sr[p]));
      }
    }
  }
}

// The tile loop is neon_qloops.h's.
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride, float clamp_min, float clamp_max) {
  neon::run_4x8<tile, neon::rows_i8mm, kRhsBlock>(m, n, k, lhs_packed, rhs_packed, dst, dst_stride,
                                                  clamp_min, clamp_max);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_i8mm = {
    "matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_i8mm", Isa::i8mm, WeightType::q4_0, false, params,
    &lhs_quant_pack_qsi8d32pscalef16_f32_neon, &rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0, run};

}  // namespace qmm
