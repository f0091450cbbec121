#include "kernels/arm/matmul_clamp_f32_f32p1x1_f32p8x1_1x8_neon.h"

#include "kernels/arm/neon_common.h"
#include "kernels/ref/pack_float_panels.h"

namespace qmm {
namespace {

constexpr size_t kNr = 8;

TileParams params(size_t) { return {1, kNr, 1, 1, 1, kNr}; }

// One 8-column panel of one row: columns 0..3 in *c0, 4..7 in *c1 (unclamped).
void dot_panel(size_t k, const float* lhs, const float* rhs, float32x4_t* c0, float32x4_t* c1) {
  float32x4_t acc[4][2];
  for (auto& a : acc) a[0] = a[1] = vdupq_n_f32(0.0f);
  size_t c = 0;
  for (; c + 4 <= k; c += 4, lhs += 4, rhs += 4 * kNr) {
    const float32x4_t a = vld1q_f32(lhs);
    acc[0][0] = vfmaq_laneq_f32(acc[0][0], vld1q_f32(rhs), a, 0);
    acc[0][1] = vfmaq_laneq_f32(acc[0][1], vld1q_f32(rhs + 4), a, 0);
    acc[1][0] = vfmaq_laneq_f32(acc[1][0], vld1q_f32(rhs + 8), a, 1);
    acc[1][1] = vfmaq_laneq_f32(acc[1][1], vld1q_f32(rhs + 12), a, 1);
    acc[2][0] = vfmaq_laneq_f32(acc[2][0], vld1q_f32(rhs + 16), a, 2);
    acc[2][1] = vfmaq_laneq_f32(acc[2][1], vld1q_f32(rhs + 20), a, 2);
    acc[3][0] = vfmaq_laneq_f32(acc[3][0], vld1q_f32(rhs + 24), a, 3);
    acc[3][1] = vfmaq_laneq_f32(acc[3][1], vld1q_f32(rhs + 28), a, 3);
  }
  for (; c < k; ++c, ++lhs, rhs += kNr) {
    acc[0][0] = vfmaq_n_f32(acc[0][0], vld1q_f32(rhs), *lhs);
    acc[0][1] = vfmaq_n_f32(acc[0][1], vld1q_f32(rhs + 4), *lhs);
  }
  *c0 = vaddq_f32(vaddq_f32(acc[0][0], acc[1][0]), vaddq_f32(acc[2][0], acc[3][0]));
  *c1 = vaddq_f32(vaddq_f32(acc[0][1], acc[1][1]), vaddq_f32(acc[2][1], acc[3][1]));
}

void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride, float clamp_min, float clamp_max) {
  const float32x4_t lo = vdupq_n_f32(clamp_min), hi = vdupq_n_f32(clamp_max);
  for (size_t i = 0; i < m; ++i) {
    const float* lhs = static_cast<const float*>(lhs_packed) + i * k;
    float* out = neon::row_ptr(dst, dst_stride, i);
    for (size_t j = 0; j < n; j += kNr) {
      float32x4_t c0, c1;
      dot_panel(k, lhs, static_cast<const float*>(rhs_packed) + j * k, &c0, &c1);
      neon::store_row8(out + j, neon::clamp(c0, lo, hi), neon::clamp(c1, lo, hi), n - j);
    }
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_f32p1x1_f32p8x1_1x8_neon = {
    "matmul_clamp_f32_f32p1x1_f32p8x1_1x8_neon", Isa::neon, WeightType::f32, true, params,
    &lhs_pack_f32p_f32, &rhs_pack_nxk_f32p_f32, run};

}  // namespace qmm
