// Small NEON helpers shared by the NEON kernels (base Armv8-A instructions only).
// Internal linkage on purpose: every kernel file is compiled with its own -march flags, so each
// one must get its own copy (an inline function with external linkage could be merged across
// files built for different ISAs).
#pragma once
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace qmm::neon {
namespace {

// 8 bytes replicated into both halves (LD1R .2D).
inline int8x16_t load_dup8(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return vreinterpretq_s8_u64(vdupq_n_u64(v));
}

inline int8x16_t load_s8(const uint8_t* p) { return vreinterpretq_s8_u8(vld1q_u8(p)); }

// Signed int4 nibbles (qsi4 layouts) -> int8 times 16: low nibbles by a left shift, high
// nibbles by masking in place. Sums are then 16x too large; vcvtq_n_f32_s32(x, 4) undoes it.
inline int8x16_t nibbles_lo(int8x16_t v) { return vshlq_n_s8(v, 4); }
inline int8x16_t nibbles_hi(int8x16_t v) { return vandq_s8(v, vdupq_n_s8(static_cast<int8_t>(0xf0))); }

inline float f16_to_f32(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}
inline float32x4_t f16x4_to_f32(const uint8_t* p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(p))));
}

// (x[2h], x[2h+1], x[2h], x[2h+1]): a pair of lanes repeated (the column pattern of a 2x2 SMMLA block).
inline float32x4_t dup_pair(float32x4_t x, int h) {
  const float64x2_t d = vreinterpretq_f64_f32(x);
  return vreinterpretq_f32_f64(h == 0 ? vdupq_laneq_f64(d, 0) : vdupq_laneq_f64(d, 1));
}

// 4x4 transpose: columns c[0..3] (rows in the lanes) -> rows r[0..3].
inline void transpose4(const float32x4_t c[4], float32x4_t r[4]) {
  const float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(c[0], c[1]));
  const float64x2_t t1 = vreinterpretq_f64_f32(vtrn2q_f32(c[0], c[1]));
  const float64x2_t t2 = vreinterpretq_f64_f32(vtrn1q_f32(c[2], c[3]));
  const float64x2_t t3 = vreinterpretq_f64_f32(vtrn2q_f32(c[2], c[3]));
  r[0] = vreinterpretq_f32_f64(vzip1q_f64(t0, t2));
  r[1] = vreinterpretq_f32_f64(vzip1q_f64(t1, t3));
  r[2] = vreinterpretq_f32_f64(vzip2q_f64(t0, t2));
  r[3] = vreinterpretq_f32_f64(vzip2q_f64(t1, t3));
}

inline float32x4_t clamp(float32x4_t v, float32x4_t lo, float32x4_t hi) { return vminq_f32(vmaxq_f32(v, lo), hi); }

// Stores the first `cols` (1..8) of a row held in two vectors.
inline void store_row8(float* out, float32x4_t a, float32x4_t b, size_t cols) {
  if (cols >= 8) {
    vst1q_f32(out, a);
    vst1q_f32(out + 4, b);
    return;
  }
  float tmp[8];
  vst1q_f32(tmp, a);
  vst1q_f32(tmp + 4, b);
  std::memcpy(out, tmp, cols * sizeof(float));
}

inline float* row_ptr(float* dst, size_t stride_bytes, size_t i) {
  return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride_bytes);
}

}  // namespace
}  // namespace qmm::neon
