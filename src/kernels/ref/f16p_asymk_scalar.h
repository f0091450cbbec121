// The scalar F16-activation GEMM of the asymmetric K-quants (Q4_K, Q5_K: w = d·sc·q − dmin·m
// per 32-element sub-block), shared by matmul_clamp_f32_f16p4x2_q4kp8x4_4x8_scalar and
// matmul_clamp_f32_f16p4x2_q5kp8x4_4x8_scalar (their headers give the contract):
//
//   dst[i, j] = clamp(Σ_c a[i, c] · w[j, c], lo, hi), summed in F32 in c order, where
//   a = the F16 activation of lhs_pack_f16pmrx2_f32 and, per 32-element sub-block,
//   w = f16(q · f16(d·sc) − f16(dmin·m)): the 6-bit factors times the super-block's f16 d / dmin,
//   each rounded to F16, then the weight rounded once (the SME2 kernels' FMUL and FMAD).
//
// mr 4, nr 8, kr 4, sr 2; k a multiple of 256. Include only from those two sources.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/fp16.h"
#include "kernels/ref/layouts.h"
#include "kernels/ref/layouts_k.h"
#include "kernels/ukernel.h"

namespace qmm::f16p_asymk {
namespace {  // internal linkage: one copy per kernel source

constexpr size_t kMr = 4, kNr = 8;

inline TileParams params(size_t) { return {kMr, kNr, 4, 2, kMr, kNr}; }

inline float* row(float* dst, size_t stride, size_t i) {
  return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride);
}

// x rounded once to F16: x exact in double; rounded to odd in F32 (24 bits, more than F16's 11
// + 2), which FP32 -> F16 then rounds to nearest even as one rounding would.
inline uint16_t f16_once(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) != x) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 1) == 0) f = std::nextafter(f, x > f ? INFINITY : -INFINITY);
  }
  return fp32_to_fp16(f);
}

// Per column and 32-element sub-block: its 32 weights in F16, then each row's F32 sum carried
// on in dst (stored and reloaded exactly), in c order. No allocation (the microkernel contract).
template <class L>
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t stride,
         float lo, float hi) {
  const auto* lp = static_cast<const uint8_t*>(lhs_packed);
  const auto* rp = static_cast<const uint8_t*>(rhs_packed);
  const size_t lhs_panel = kMr * k * 2, rhs_panel = L::panel_bytes(kNr, k);
  for (size_t j = 0; j < n; ++j) {
    const uint8_t* panel = rp + j / kNr * rhs_panel;
    const size_t r = j % kNr;
    for (size_t b = 0; b < k / 32; ++b) {
      // d·sc and dmin·m are exact in F32 (11 × 6 bits), rounded once to F16
      const double s = fp16_to_fp32(fp32_to_fp16(L::factor(panel, kNr, r, b, 0)));
      const double mn = fp16_to_fp32(fp32_to_fp16(L::factor(panel, kNr, r, b, 1)));
      float w[32];
      for (size_t c = 0; c < 32; ++c) {
        // q·s (16 bits) and its difference with mn are exact in double: one rounding to F16
        w[c] = fp16_to_fp32(f16_once(L::value(panel, kNr, r, b * 32 + c) * s - mn));
      }
      for (size_t i = 0; i < m; ++i) {
        const uint8_t* lpanel = lp + i / kMr * lhs_panel;
        float acc = b == 0 ? 0.0f : row(dst, stride, i)[j];
        for (size_t c = 0; c < 32; ++c) {
          const float a = fp16_to_fp32(layout::load_u16(lpanel + layout::panel_index(kMr, 2, i % kMr, b * 32 + c) * 2));
          acc += a * w[c];  // the product of two F16 values is exact: one rounding, fused or not
        }
        row(dst, stride, i)[j] = acc;
      }
    }
    for (size_t i = 0; i < m; ++i) row(dst, stride, i)[j] = std::min(std::max(row(dst, stride, i)[j], lo), hi);
  }
}

}  // namespace
}  // namespace qmm::f16p_asymk
