#include "kernels/arm/matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_neon_dotprod.h"

#include <arm_neon.h>

#include <cstdint>

#include "core/blocks.h"

namespace qmm {
namespace {

// 4 f16 scales at p -> F32 (exact, as the SME2 kernel's FCVT).
inline float32x4_t scales4(const uint8_t* p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(p))));
}

// Rows i0..i0+3 × columns j0..j0+7 of one VL × 4·VL panel pair (lhs, rhs: the panels), over all
// blocks; rows / cols: how many of them to store.
template <size_t VL>
inline void micro_tile(size_t rows, size_t cols, size_t blocks, const uint8_t* lhs, const uint8_t* rhs, size_t i0,
                       size_t j0, float* dst, size_t stride, float32x4_t lo, float32x4_t hi) {
  constexpr size_t nr = 4 * VL;
  const uint8_t* lsc = lhs + VL * blocks * kBlock + i0 * 2;
  const uint8_t* rsc = rhs + nr * blocks * (kBlock / 2) + j0 * 2;
  lhs += i0 * 4;  // the quads hold 4 bytes per row and 2 per column
  rhs += j0 * 2;
  const uint8x16_t low = vdupq_n_u8(0x0f);
  const int8x16_t eight = vdupq_n_s8(8);
  float32x4_t acc[4][2];
  for (auto& r : acc) r[0] = r[1] = vdupq_n_f32(0.0f);
  for (size_t b = 0; b < blocks; ++b) {
    int32x4_t is[4][2];
    for (auto& r : is) r[0] = r[1] = vdupq_n_s32(0);
    for (size_t q = 0; q < 8; ++q) {
      const size_t c = b * 8 + q;
      // LHS quad c: VL rows × 4 int8 (rows 0..3 of the micro-tile are 16 contiguous bytes).
      const int8x16_t a = vld1q_s8(reinterpret_cast<const int8_t*>(lhs + c * 4 * VL));
      // RHS quad c: a u16 per column, nibbles k0..k3 low first: byte 2j = k0 | k1 << 4, byte
      // 2j + 1 = k2 | k3 << 4; ZIP of the low and high nibbles puts k0..k3 of a column together.
      const uint8x16_t w = vld1q_u8(rhs + c * nr * 2);
      const uint8x16_t wl = vandq_u8(w, low), wh = vshrq_n_u8(w, 4);
      const int8x16_t w03 = vsubq_s8(vreinterpretq_s8_u8(vzip1q_u8(wl, wh)), eight);
      const int8x16_t w47 = vsubq_s8(vreinterpretq_s8_u8(vzip2q_u8(wl, wh)), eight);
      is[0][0] = vdotq_laneq_s32(is[0][0], w03, a, 0);
      is[0][1] = vdotq_laneq_s32(is[0][1], w47, a, 0);
      is[1][0] = vdotq_laneq_s32(is[1][0], w03, a, 1);
      is[1][1] = vdotq_laneq_s32(is[1][1], w47, a, 1);
      is[2][0] = vdotq_laneq_s32(is[2][0], w03, a, 2);
      is[2][1] = vdotq_laneq_s32(is[2][1], w47, a, 2);
      is[3][0] = vdotq_laneq_s32(is[3][0], w03, a, 3);
      is[3][1] = vdotq_laneq_s32(is[3][1], w47, a, 3);
    }
    const float32x4_t ls = scales4(lsc + b * VL * 2);
    const float32x4_t r0 = scales4(rsc + b * nr * 2), r1 = scales4(rsc + b * nr * 2 + 8);
    // acc += float(isum) · (rsc · s_lhs): the SME2 kernel's FMUL by element, then FMLA.
    acc[0][0] = vfmaq_f32(acc[0][0], vcvtq_f32_s32(is[0][0]), vmulq_laneq_f32(r0, ls, 0));
    acc[0][1] = vfmaq_f32(acc[0][1], vcvtq_f32_s32(is[0][1]), vmulq_laneq_f32(r1, ls, 0));
    acc[1][0] = vfmaq_f32(acc[1][0], vcvtq_f32_s32(is[1][0]), vmulq_laneq_f32(r0, ls, 1));
    acc[1][1] = vfmaq_f32(acc[1][1], vcvtq_f32_s32(is[1][1]), vmulq_laneq_f32(r1, ls, 1));
    acc[2][0] = vfmaq_f32(acc[2][0], vcvtq_f32_s32(is[2][0]), vmulq_laneq_f32(r0, ls, 2));
    acc[2][1] = vfmaq_f32(acc[2][1], vcvtq_f32_s32(is[2][1]), vmulq_laneq_f32(r1, ls, 2));
    acc[3][0] = vfmaq_f32(acc[3][0], vcvtq_f32_s32(is[3][0]), vmulq_laneq_f32(r0, ls, 3));
    acc[3][1] = vfmaq_f32(acc[3][1], vcvtq_f32_s32(is[3][1]), vmulq_laneq_f32(r1, ls, 3));
  }
  for (size_t i = 0; i < rows && i < 4; ++i) {
    float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride);
    float v[8];
    vst1q_f32(v, vminq_f32(vmaxq_f32(acc[i][0], lo), hi));
    vst1q_f32(v + 4, vminq_f32(vmaxq_f32(acc[i][1], lo), hi));
    for (size_t j = 0; j < cols && j < 8; ++j) out[j] = v[j];
  }
}

template <size_t VL>
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t stride,
         float lo, float hi) {
  constexpr size_t nr = 4 * VL;
  const size_t blocks = k / kBlock;
  const size_t lhs_panel = VL * blocks * (kBlock + 2), rhs_panel = nr * blocks * (kBlock / 2 + 2);
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  for (size_t n0 = 0; n0 < n; n0 += nr) {
    const uint8_t* rhs = static_cast<const uint8_t*>(rhs_packed) + n0 / nr * rhs_panel;
    for (size_t m0 = 0; m0 < m; m0 += VL) {
      const uint8_t* lhs = static_cast<const uint8_t*>(lhs_packed) + m0 / VL * lhs_panel;
      const size_t rows = m - m0 < VL ? m - m0 : VL, cols = n - n0 < nr ? n - n0 : nr;
      for (size_t i0 = 0; i0 < rows; i0 += 4) {
        for (size_t j0 = 0; j0 < cols; j0 += 8) {
          float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + (m0 + i0) * stride) + n0 + j0;
          micro_tile<VL>(rows - i0, cols - j0, blocks, lhs, rhs, i0, j0, out, stride, vlo, vhi);
        }
      }
    }
  }
}

}  // namespace

MatmulFn q4_0_sme2_layout_gemm_neon_dotprod(size_t svl_bytes) {
  switch (svl_bytes) {
    case 16: return run<4>;
    case 32: return run<8>;
    case 64: return run<16>;
    case 128: return run<32>;
    case 256: return run<64>;
    default: return nullptr;
  }
}

}  // namespace qmm
