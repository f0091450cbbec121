// The loops shared by the base-NEON float kernels (F16 and F32 weights, F32 activations):
// they differ only in how eight weights of one k-column become two F32 vectors (`load8`).
// Included only by those kernel files (compiled for base Armv8-A); internal linkage, as in
// neon_common.h.
#pragma once
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arm/neon_common.h"

namespace qmm::neon_float {
namespace {

constexpr size_t kNr = 8;

inline void load8(const float* p, float32x4_t* w0, float32x4_t* w1) {
  *w0 = vld1q_f32(p);
  *w1 = vld1q_f32(p + 4);
}

// F16 widened with FCVTL / FCVTL2.
inline void load8(const uint16_t* p, float32x4_t* w0, float32x4_t* w1) {
  const float16x8_t w = vreinterpretq_f16_u16(vld1q_u16(p));
  *w0 = vcvt_f32_f16(vget_low_f16(w));
  *w1 = vcvt_high_f32_f16(w);
}

// One 8x8 tile: acc[i][h] = row i, columns 4h..4h+3 (unclamped).
template <class W>
void tile_8x8(size_t k, const float* lhs, const W* rhs, float32x4_t acc[8][2]) {
  for (size_t i = 0; i < 8; ++i) acc[i][0] = acc[i][1] = vdupq_n_f32(0.0f);
  for (size_t c = 0; c < k; ++c, lhs += 8, rhs += kNr) {
    float32x4_t w0, w1;
    load8(rhs, &w0, &w1);
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

// GEMM over 8-row LHS panels and 8-column RHS panels of W.
template <class W>
void gemm_8x8(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
              size_t dst_stride, float clamp_min, float clamp_max) {
  const float32x4_t lo = vdupq_n_f32(clamp_min), hi = vdupq_n_f32(clamp_max);
  for (size_t i0 = 0; i0 < m; i0 += 8) {
    const float* lhs = static_cast<const float*>(lhs_packed) + i0 * k;
    for (size_t j = 0; j < n; j += kNr) {
      float32x4_t acc[8][2];
      tile_8x8(k, lhs, static_cast<const W*>(rhs_packed) + j * k, acc);
      for (size_t i = 0; i < 8 && i0 + i < m; ++i) {
        neon::store_row8(neon::row_ptr(dst, dst_stride, i0 + i) + j, neon::clamp(acc[i][0], lo, hi),
                         neon::clamp(acc[i][1], lo, hi), n - j);
      }
    }
  }
}

// One 8-column panel of one row: columns 0..3 in *c0, 4..7 in *c1 (unclamped); four
// k-columns per step into four accumulator pairs.
template <class W>
void dot_panel(size_t k, const float* lhs, const W* rhs, float32x4_t* c0, float32x4_t* c1) {
  float32x4_t acc[4][2];
  for (auto& a : acc) a[0] = a[1] = vdupq_n_f32(0.0f);
  size_t c = 0;
  for (; c + 4 <= k; c += 4, lhs += 4, rhs += 4 * kNr) {
    const float32x4_t a = vld1q_f32(lhs);
    float32x4_t w[4][2];
    for (size_t q = 0; q < 4; ++q) load8(rhs + q * kNr, &w[q][0], &w[q][1]);
    acc[0][0] = vfmaq_laneq_f32(acc[0][0], w[0][0], a, 0);
    acc[0][1] = vfmaq_laneq_f32(acc[0][1], w[0][1], a, 0);
    acc[1][0] = vfmaq_laneq_f32(acc[1][0], w[1][0], a, 1);
    acc[1][1] = vfmaq_laneq_f32(acc[1][1], w[1][1], a, 1);
    acc[2][0] = vfmaq_laneq_f32(acc[2][0], w[2][0], a, 2);
    acc[2][1] = vfmaq_laneq_f32(acc[2][1], w[2][1], a, 2);
    acc[3][0] = vfmaq_laneq_f32(acc[3][0], w[3][0], a, 3);
    acc[3][1] = vfmaq_laneq_f32(acc[3][1], w[3][1], a, 3);
  }
  for (; c < k; ++c, ++lhs, rhs += kNr) {
    float32x4_t w0, w1;
    load8(rhs, &w0, &w1);
    acc[0][0] = vfmaq_n_f32(acc[0][0], w0, *lhs);
    acc[0][1] = vfmaq_n_f32(acc[0][1], w1, *lhs);
  }
  *c0 = vaddq_f32(vaddq_f32(acc[0][0], acc[1][0]), vaddq_f32(acc[2][0], acc[3][0]));
  *c1 = vaddq_f32(vaddq_f32(acc[0][1], acc[1][1]), vaddq_f32(acc[2][1], acc[3][1]));
}

// GEMV (rows taken one at a time) over 8-column RHS panels of W.
template <class W>
void gemv_1x8(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
              size_t dst_stride, float clamp_min, float clamp_max) {
  const float32x4_t lo = vdupq_n_f32(clamp_min), hi = vdupq_n_f32(clamp_max);
  for (size_t i = 0; i < m; ++i) {
    const float* lhs = static_cast<const float*>(lhs_packed) + i * k;
    float* out = neon::row_ptr(dst, dst_stride, i);
    for (size_t j = 0; j < n; j += kNr) {
      float32x4_t c0, c1;
      dot_panel(k, lhs, static_cast<const W*>(rhs_packed) + j * k, &c0, &c1);
      neon::store_row8(out + j, neon::clamp(c0, lo, hi), neon::clamp(c1, lo, hi), n - j);
    }
  }
}

}  // namespace
}  // namespace qmm::neon_float
