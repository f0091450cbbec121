// The 4x8 GEMM loops shared by the NEON quantized kernels (Q4_0 and Q8_0 weights, I8MM and
// DotProd): the kernels supply only `tile`, the F32 sums of one 4x8 tile over all blocks.
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

// Row 2h + odd of a 2x2-blocked SMMLA tile: columns 0..3 from blocks p = 0, 1; 4..7 from p = 2, 3.
inline float32x4_t tile_row(const float32x4_t x, const float32x4_t y, bool odd) {
  const float64x2_t a = vreinterpretq_f64_f32(x), b = vreinterpretq_f64_f32(y);
  return vreinterpretq_f32_f64(odd ? vzip2q_f64(a, b) : vzip1q_f64(a, b));
}

// I8MM: Tile(blocks, lhs, rhs, acc[2][4]) leaves acc[h][p] as the 2x2 block of rows 2h, 2h+1 x
// columns 2p, 2p+1. kPanelBlock: bytes per block of an 8-column RHS panel (scales included).
template <void (*Tile)(size_t, const uint8_t*, const uint8_t*, float32x4_t[2][4]), size_t kPanelBlock>
void run_i8mm_4x8(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                  size_t dst_stride, float clamp_min, float clamp_max) {
  const size_t blocks = k / kBlock;
  const float32x4_t lo = vdupq_n_f32(clamp_min), hi = vdupq_n_f32(clamp_max);
  for (size_t i0 = 0; i0 < m; i0 += kQMr) {
    const uint8_t* lhs = static_cast<const uint8_t*>(lhs_packed) + i0 / kQMr * blocks * kQLhsBlock;
    for (size_t j = 0; j < n; j += kQNr) {
      const uint8_t* rhs = static_cast<const uint8_t*>(rhs_packed) + j / kQNr * blocks * kPanelBlock;
      float32x4_t acc[2][4];
      Tile(blocks, lhs, rhs, acc);
      for (size_t i = 0; i < kQMr && i0 + i < m; ++i) {
        const size_t h = i / 2;
        const bool odd = i % 2 != 0;
        store_row8(row_ptr(dst, dst_stride, i0 + i) + j, clamp(tile_row(acc[h][0], acc[h][1], odd), lo, hi),
                   clamp(tile_row(acc[h][2], acc[h][3], odd), lo, hi), n - j);
      }
    }
  }
}

// DotProd: Tile(blocks, lhs, rhs, acc[8]) leaves acc[j] as column j (rows 0..3 in the lanes).
template <void (*Tile)(size_t, const uint8_t*, const uint8_t*, float32x4_t[8]), size_t kPanelBlock>
void run_dotprod_4x8(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                     size_t dst_stride, float clamp_min, float clamp_max) {
  const size_t blocks = k / kBlock;
  const float32x4_t lo = vdupq_n_f32(clamp_min), hi = vdupq_n_f32(clamp_max);
  for (size_t i0 = 0; i0 < m; i0 += kQMr) {
    const uint8_t* lhs = static_cast<const uint8_t*>(lhs_packed) + i0 / kQMr * blocks * kQLhsBlock;
    for (size_t j = 0; j < n; j += kQNr) {
      const uint8_t* rhs = static_cast<const uint8_t*>(rhs_packed) + j / kQNr * blocks * kPanelBlock;
      float32x4_t acc[kQNr], r0[4], r1[4];
      Tile(blocks, lhs, rhs, acc);
      transpose4(acc, r0);
      transpose4(acc + 4, r1);
      for (size_t i = 0; i < kQMr && i0 + i < m; ++i) {
        store_row8(row_ptr(dst, dst_stride, i0 + i) + j, clamp(r0[i], lo, hi), clamp(r1[i], lo, hi), n - j);
      }
    }
  }
}

}  // namespace
}  // namespace qmm::neon
