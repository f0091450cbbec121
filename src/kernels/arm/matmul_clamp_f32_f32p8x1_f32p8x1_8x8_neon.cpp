#include "kernels/arm/matmul_clamp_f32_f32p8x1_f32p8x1_8x8_neon.h"

#include "kernels/arm/neon_common.h"
#include "kernels/ref/pack_float_panels.h"

namespace qmm {
namespace {

constexpr size_t kMr = 8, kNr = 8;

TileParams params(size_t) { return {kMr, kNr, 1, 1, kMr, kNr}; }

// One 8x8 tile: acc[i][h] = row i, columns 4h..4h+3 (unclamped).
void tile(size_t k, const float* lhs, const float* rhs, float32x4_t acc[kMr][2]) {
  for (size_t i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = vdupq_n_f32(0.0f);
  for (size_t c = 0; c < k; ++c, lhs += kMr, rhs += kNr) {
    const float32x4_t w0 = vld1q_f32(rhs), w1 = vld1q_f32(rhs + 4);
    const float32x4_t a0 = vld1q_f32(lhs), a1 = vld1q_f32(lhs + 4);
    acc[0][0] = vfmaq_laneq_f32(acc[0][0], w0, a0, 0);
    acc[0][1] = vfmaq_laneq_f32(acc[0][1], w1, a0, 0);
    acc[1][0] = vfmaq_laneq_f32(acc[1][0], w0, a0, 1);
    acc[1][1] = vfmaq_laneq_f32(acc[1][1], w1, a0, 1);
    acc[2][0] = vfmaq_laneq_f32(acc[2][0], w0, a0, 2);
    acc[2][1] = vfmaq_laneq_f32(acc[2][1], w1, a0, 2);
    acc[3][0] = vfmaq_laneq_f32(acc[3][0], w0, a0, 3);
    acc[3][1] = vfmaq_laneq_f32(acc[3][1], w1, a0, 3);
    acc[4][0] = vfmaq_laneq_f32(acc[4][0], w0, a1, 0);
    acc[4][1] = vfmaq_laneq_f32(acc[4][1], w1, a1, 0);
    acc[5][0] = vfmaq_laneq_f32(acc[5][0], w0, a1, 1);
    acc[5][1] = vfmaq_laneq_f32(acc[5][1], w1, a1, 1);
    acc[6][0] = vfmaq_laneq_f32(acc[6][0], w0, a1, 2);
    acc[6][1] = vfmaq_laneq_f32(acc[6][1], w1, a1, 2);
    acc[7][0] = vfmaq_laneq_f32(acc[7][0], w0, a1, 3);
    acc[7][1] = vfmaq_laneq_f32(acc[7][1], w1, a1, 3);
  }
}

void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride, float clamp_min, float clamp_max) {
  const float32x4_t lo = vdupq_n_f32(clamp_min), hi = vdupq_n_f32(clamp_max);
  for (size_t i0 = 0; i0 < m; i0 += kMr) {
    const float* lhs = static_cast<const float*>(lhs_packed) + i0 * k;
    for (size_t j = 0; j < n; j += kNr) {
      const float* rhs = static_cast<const float*>(rhs_packed) + j * k;
      float32x4_t acc[kMr][2];
      tile(k, lhs, rhs, acc);
      for (size_t i = 0; i < kMr && i0 + i < m; ++i) {
        neon::store_row8(neon::row_ptr(dst, dst_stride, i0 + i) + j, neon::clamp(acc[i][0], lo, hi),
                         neon::clamp(acc[i][1], lo, hi), n - j);
      }
    }
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_f32p8x1_f32p8x1_8x8_neon = {
    "matmul_clamp_f32_f32p8x1_f32p8x1_8x8_neon", Isa::neon, WeightType::f32, false, params,
    &lhs_pack_f32p_f32, &rhs_pack_nxk_f32p_f32, run};

}  // namespace qmm
