// The loop of the scalar F16-activation GEMMs (matmul_clamp_f32_f16p4x2_{qsi4c32p,q4kp,q5kp,
// q6kp}8x4_4x8_scalar; their headers give each contract), over a per-type block decoder D:
//
//   dst[i, j] = clamp(Σ_c a[i, c] · w[j, c], lo, hi), summed in F32 in c order, where
//   a = the F16 activation of lhs_pack_f16pmrx2_f32 and w = the type's F16 weight (D).
//
// D: kLen (weights per decoded block: a scale group), panel_bytes(nr, k) of the RHS panel and
// weights(panel, nr, k, r, b, w): the kLen weights of block b of column r, each an F16 value
// in F32. mr 4, nr 8, kr 4, sr 2. Include only from those kernels' sources.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/fp16.h"
#include "kernels/ref/layouts.h"
#include "kernels/ukernel.h"

namespace qmm::f16p {
namespace {  // internal linkage: one copy per kernel source

constexpr size_t kMr = 4, kNr = 8;

inline TileParams params(size_t) { return {kMr, kNr, 4, 2, kMr, kNr}; }

inline float* row(float* dst, size_t stride, size_t i) {
  return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride);
}

// x rounded to F16 and back.
inline float f16(float x) { return fp16_to_fp32(fp32_to_fp16(x)); }

// Per column and block: its kLen weights in F16, then each row's F32 sum carried on in dst
// (stored and reloaded exactly), in c order. No allocation (the microkernel contract).
template <class D>
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t stride,
         float lo, float hi) {
  const auto* lp = static_cast<const uint8_t*>(lhs_packed);
  const auto* rp = static_cast<const uint8_t*>(rhs_packed);
  const size_t lhs_panel = kMr * k * 2, rhs_panel = D::panel_bytes(kNr, k);
  for (size_t j = 0; j < n; ++j) {
    const uint8_t* panel = rp + j / kNr * rhs_panel;
    for (size_t b = 0; b < k / D::kLen; ++b) {
      float w[D::kLen];
      D::weights(panel, kNr, k, j % kNr, b, w);
      for (size_t i = 0; i < m; ++i) {
        const uint8_t* lpanel = lp + i / kMr * lhs_panel;
        float acc = b == 0 ? 0.0f : row(dst, stride, i)[j];
        for (size_t c = 0; c < D::kLen; ++c) {
          const float a = fp16_to_fp32(layout::load_u16(lpanel + layout::panel_index(kMr, 2, i % kMr, b * D::kLen + c) * 2));
          acc += a * w[c];  // the product of two F16 values is exact: one rounding, fused or not
        }
        row(dst, stride, i)[j] = acc;
      }
    }
    for (size_t i = 0; i < m; ++i) row(dst, stride, i)[j] = std::min(std::max(row(dst, stride, i)[j], lo), hi);
  }
}

}  // namespace
}  // namespace qmm::f16p
