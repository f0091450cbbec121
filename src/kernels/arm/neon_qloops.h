// The loops shared by the NEON quantized kernels (Q4_0, Q8_0 and the K-quants, I8MM and
// DotProd): the GEMMs supply only `tile`, the F32 sums of one 4x8 tile over all blocks, the
// GEMVs only `panel`, the F32 sums of one row and 8 columns.
// Internal linkage, as in neon_common.h: each kernel file is compiled for its own ISA.
#pragma once
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "core/blocks.h"
#include "kernels/arm/neon_common.h"

namespace qmm::neon {
namespace {

constexpr size_t kQMr = 4, kQNr = 8;
constexpr size_t kQLhsBlock = kQMr * (kBlock + 2);  // 4 f16 scales + 4 x 32 int8 per block

// The rows of a 4x8 tile, r[i] = {columns 0..3, columns 4..7} of row i:
// I8MM tiles hold 2x2 blocks, acc[4h + p] = rows 2h, 2h+1 x columns 2p, 2p+1 (SMMLA's layout);
inline void rows_i8mm(const float32x4_t acc[8], float32x4_t r[4][2]) {
  for (size_t i = 0; i < 4; ++i) {
    const size_t h = i / 2;
    auto row = [&](size_t p) {  // columns 2p..2p+3 of row i, from blocks p and p + 1
      const float64x2_t a = vreinterpretq_f64_f32(acc[4 * h + p]), b = vreinterpretq_f64_f32(acc[4 * h + p + 1]);
      return vreinterpretq_f32_f64(i % 2 ? vzip2q_f64(a, b) : vzip1q_f64(a, b));
    };
    r[i][0] = row(0);
    r[i][1] = row(2);
  }
}
// DotProd tiles hold columns, acc[j] = column j with rows 0..3 in the lanes.
inline void rows_dotprod(const float32x4_t acc[8], float32x4_t r[4][2]) {
  float32x4_t r0[4], r1[4];
  transpose4(acc, r0);
  transpose4(acc + 4, r1);
  for (size_t i = 0; i < 4; ++i) r[i][0] = r0[i], r[i][1] = r1[i];
}

// dst = clamp(lhs · Wᵀ) in 4x8 tiles: Tile(blocks, lhs, rhs, acc) sums one tile over all
// blocks, Rows turns its accumulators into rows. kPanelBlock: bytes per block of an
// 8-column RHS panel (scales included).
template <void (*Tile)(size_t, const uint8_t*, const uint8_t*, float32x4_t*),
          void (*Rows)(const float32x4_t*, float32x4_t[4][2]), size_t kPanelBlock>
void run_4x8(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
             size_t dst_stride, float clamp_min, float clamp_max) {
  const size_t blocks = k / kBlock;
  const float32x4_t lo = vdupq_n_f32(clamp_min), hi = vdupq_n_f32(clamp_max);
  for (size_t i0 = 0; i0 < m; i0 += kQMr) {
    const uint8_t* lhs = static_cast<const uint8_t*>(lhs_packed) + i0 / kQMr * blocks * kQLhsBlock;
    for (size_t j = 0; j < n; j += kQNr) {
      const uint8_t* rhs = static_cast<const uint8_t*>(rhs_packed) + j / kQNr * blocks * kPanelBlock;
      float32x4_t acc[8], r[4][2];
      Tile(blocks, lhs, rhs, acc);
      Rows(acc, r);
      for (size_t i = 0; i < kQMr && i0 + i < m; ++i) {
        store_row8(row_ptr(dst, dst_stride, i0 + i) + j, clamp(r[i][0], lo, hi), clamp(r[i][1], lo, hi), n - j);
      }
    }
  }
}

// dst = clamp(lhs · Wᵀ) one row and 8-column panel at a time: Panel(blocks, lhs, rhs, &c0, &c1)
// sums one panel over all blocks (columns 0..3 in c0, 4..7 in c1). LHS rows of blocks·34
// bytes (mr = 1); kPanelBlock: bytes per block of an 8-column RHS panel (scales included).
template <void (*Panel)(size_t, const uint8_t*, const uint8_t*, float32x4_t*, float32x4_t*), size_t kPanelBlock>
void run_1x8(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
             size_t dst_stride, float clamp_min, float clamp_max) {
  const size_t blocks = k / kBlock;
  const float32x4_t lo = vdupq_n_f32(clamp_min), hi = vdupq_n_f32(clamp_max);
  for (size_t i = 0; i < m; ++i) {
    const uint8_t* lhs = static_cast<const uint8_t*>(lhs_packed) + i * blocks * (kBlock + 2);
    float* out = row_ptr(dst, dst_stride, i);
    for (size_t j = 0; j < n; j += kQNr) {
      const uint8_t* rhs = static_cast<const uint8_t*>(rhs_packed) + j / kQNr * blocks * kPanelBlock;
      float32x4_t c0, c1;
      Panel(blocks, lhs, rhs, &c0, &c1);
      store_row8(out + j, clamp(c0, lo, hi), clamp(c1, lo, hi), n - j);
    }
  }
}

}  // namespace
}  // namespace qmm::neon
