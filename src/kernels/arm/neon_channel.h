// The NEON (I8MM / DotProd) loops of the per-channel kernels: qai8dxp LHS (kc = kr/sr = 8) ×
// 4-row qsi4cxp / qsi8cxp RHS panels (kernels/ref/layouts_c.h), KleidiAI's 4x4x32 tiles.
//
// The RHS is read 8 K columns at a time as two 16-byte operands, rows 0-1 and rows 2-3, 8 bytes
// each ("step"):
//  - QC8 (qsi8cxp, nr 4, kr 8): 8-byte row chunks are the operands as they are;
//  - QC4 (qsi4cxp, nr 4, kr 16, sr 2: 8-byte row chunks holding columns 32b+8u..+7 in the low
//    nibbles and 32b+16+8u..+7 in the high ones): two steps per chunk, 16·low (SHL #4) with
//    LHS chunk 4b+u and 16·high (AND 0xF0) with LHS chunk 4b+2+u (the packer's sums ×16 and
//    scales /16 undo the 16).
// Int32 sums over all of K (exact while k < 2^16), then once per output:
//   dst = clamp(float(acc + (-zp)·rsum) · (s_lhs·s_rhs) + bias), FMAX + FMIN (NaN policy).
// Internal linkage: each kernel file is compiled with its own -march flags.
#pragma once
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/arm/neon_common.h"

namespace qmm::neonch {
namespace {

constexpr size_t kNr = 4;
inline size_t kpad(size_t k) { return (k + 31) / 32 * 32; }

struct Qc8 {
  static size_t data_bytes(size_t k) { return kNr * kpad(k); }
  // f(w01, w23, lhs_chunk) for every 8-K step of a panel.
  template <class F>
  static void steps(size_t k, const uint8_t* rhs, F&& f) {
    for (size_t c = 0; c < kpad(k) / 8; ++c) f(neon::load_s8(rhs + 32 * c), neon::load_s8(rhs + 32 * c + 16), c);
  }
};

struct Qc4 {
  static size_t data_bytes(size_t k) { return kNr * kpad(k) / 2; }
  template <class F>
  static void steps(size_t k, const uint8_t* rhs, F&& f) {
    for (size_t t = 0; t < kpad(k) / 16; ++t) {
      const int8x16_t v01 = neon::load_s8(rhs + 32 * t), v23 = neon::load_s8(rhs + 32 * t + 16);
      const size_t chunk = t / 2 * 4 + t % 2;
      f(neon::nibbles_lo(v01), neon::nibbles_lo(v23), chunk);
      f(neon::nibbles_hi(v01), neon::nibbles_hi(v23), chunk + 2);
    }
  }
};

// One output row of 4 columns (cols of them valid) from its int32 sums.
inline void store_row(int32x4_t acc, const uint8_t* tail, int32_t neg_zp, float s_lhs, float* out, size_t cols,
                      float32x4_t lo, float32x4_t hi) {
  int32x4_t sums;
  float32x4_t scales, biases;
  std::memcpy(&sums, tail, 16);
  std::memcpy(&scales, tail + 16, 16);
  std::memcpy(&biases, tail + 32, 16);
  const float32x4_t f = vcvtq_f32_s32(vmlaq_n_s32(acc, sums, neg_zp));
  // The product rounded, then the bias added (KleidiAI's bits; a fused multiply-add differs).
  const float32x4_t v = neon::clamp(vaddq_f32(vmulq_f32(f, vmulq_n_f32(scales, s_lhs)), biases), lo, hi);
  if (cols == kNr) {
    vst1q_f32(out, v);
  } else {
    float tmp[4];
    vst1q_f32(tmp, v);
    std::memcpy(out, tmp, cols * sizeof(float));
  }
}

inline float* row_ptr(float* dst, size_t stride, size_t i) {
  return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride);
}

// acc rows for the DotProd form: per row, (c0, c0', c1, c1') and (c2, c2', c3, c3') -> (c0..c3).
struct DotProd {
  // LHS panel of 4 rows (kc = 8): chunk c at 32c, row r's 8 bytes at +8r. acc[2r + p].
  static void step(int32x4_t acc[8], const uint8_t* lhs, int8x16_t w01, int8x16_t w23, size_t c) {
    for (size_t r = 0; r < 4; ++r) {
      const int8x16_t a = neon::load_dup8(lhs + 32 * c + 8 * r);
      acc[2 * r] = vdotq_s32(acc[2 * r], w01, a);
      acc[2 * r + 1] = vdotq_s32(acc[2 * r + 1], w23, a);
    }
  }
  static int32x4_t row(const int32x4_t acc[8], size_t r) { return vpaddq_s32(acc[2 * r], acc[2 * r + 1]); }
};

#if defined(__ARM_FEATURE_MATMUL_INT8)
// SMMLA: acc[2h + p] is the 2x2 block rows 2h, 2h+1 × columns 2p, 2p+1.
struct I8mm {
  static void step(int32x4_t acc[8], const uint8_t* lhs, int8x16_t w01, int8x16_t w23, size_t c) {
    const int8x16_t a01 = neon::load_s8(lhs + 32 * c), a23 = neon::load_s8(lhs + 32 * c + 16);
    acc[0] = vmmlaq_s32(acc[0], a01, w01);
    acc[1] = vmmlaq_s32(acc[1], a01, w23);
    acc[2] = vmmlaq_s32(acc[2], a23, w01);
    acc[3] = vmmlaq_s32(acc[3], a23, w23);
  }
  static int32x4_t row(const int32x4_t acc[8], size_t r) {
    const int64x2_t x = vreinterpretq_s64_s32(acc[r / 2 * 2]), y = vreinterpretq_s64_s32(acc[r / 2 * 2 + 1]);
    return vreinterpretq_s32_s64(r % 2 == 0 ? vzip1q_s64(x, y) : vzip2q_s64(x, y));
  }
};
#endif

// GEMM: 4 × 4 tiles (mr = nr = 4).
template <class W, class D>
void gemm(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t stride, float lo,
          float hi) {
  const size_t kp = kpad(k), lhs_panel = 4 * (kp + 8), rhs_data = W::data_bytes(k), rhs_panel = rhs_data + kNr * 12;
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  for (size_t i = 0; i < m; i += 4) {
    const auto* lhs = static_cast<const uint8_t*>(lhs_packed) + i / 4 * lhs_panel;
    int32_t neg_zp[4];
    float s_lhs[4];
    std::memcpy(neg_zp, lhs + 4 * kp, 16);
    std::memcpy(s_lhs, lhs + 4 * kp + 16, 16);
    for (size_t j = 0; j < n; j += kNr) {
      const auto* rhs = static_cast<const uint8_t*>(rhs_packed) + j / kNr * rhs_panel;
      int32x4_t acc[8];
      for (int32x4_t& a : acc) a = vdupq_n_s32(0);
      W::steps(k, rhs, [&](int8x16_t w01, int8x16_t w23, size_t c) { D::step(acc, lhs, w01, w23, c); });
      const size_t cols = n - j < kNr ? n - j : kNr;
      for (size_t r = 0; r < 4 && i + r < m; ++r) {
        store_row(D::row(acc, r), rhs + rhs_data, neg_zp[r], s_lhs[r], row_ptr(dst, stride, i + r) + j, cols, vlo, vhi);
      }
    }
  }
}

// GEMV (DotProd): one LHS row (mr = 1: K int8 in order, -zp, scale) × 4-column panels.
template <class W>
void gemv(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t stride, float lo,
          float hi) {
  const size_t kp = kpad(k), rhs_data = W::data_bytes(k), rhs_panel = rhs_data + kNr * 12;
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  for (size_t i = 0; i < m; ++i) {
    const auto* lhs = static_cast<const uint8_t*>(lhs_packed) + i * (kp + 8);
    int32_t neg_zp;
    float s_lhs;
    std::memcpy(&neg_zp, lhs + kp, 4);
    std::memcpy(&s_lhs, lhs + kp + 4, 4);
    for (size_t j = 0; j < n; j += kNr) {
      const auto* rhs = static_cast<const uint8_t*>(rhs_packed) + j / kNr * rhs_panel;
      int32x4_t acc01 = vdupq_n_s32(0), acc23 = vdupq_n_s32(0);
      W::steps(k, rhs, [&](int8x16_t w01, int8x16_t w23, size_t c) {
        const int8x16_t a = neon::load_dup8(lhs + 8 * c);
        acc01 = vdotq_s32(acc01, w01, a);
        acc23 = vdotq_s32(acc23, w23, a);
      });
      const size_t cols = n - j < kNr ? n - j : kNr;
      store_row(vpaddq_s32(acc01, acc23), rhs + rhs_data, neg_zp, s_lhs, row_ptr(dst, stride, i) + j, cols, vlo, vhi);
    }
  }
}

}  // namespace
}  // namespace qmm::neonch
