#include "kernels/ref/matmul_clamp_f32_f16p_q6kp_scalar.h"

#include <algorithm>

#include "core/fp16.h"
#include "kernels/ref/layouts.h"
#include "kernels/ref/layouts_k.h"
#include "kernels/ref/lhs_pack_f16pmrx2_f32.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"

namespace qmm {
namespace {

constexpr size_t kMr = 4, kNr = 8;

TileParams params(size_t) { return {kMr, kNr, 4, 2, kMr, kNr}; }

float* row(float* dst, size_t stride, size_t i) { return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride); }

float f16(float x) { return fp16_to_fp32(fp32_to_fp16(x)); }

// Per column and 16-element scale group: its 16 weights in F16, then each row's F32 sum carried
// on in dst (stored and reloaded exactly), in c order. No allocation (the microkernel contract).
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t stride,
         float lo, float hi) {
  using L = layout::Q6kp;
  const auto* lp = static_cast<const uint8_t*>(lhs_packed);
  const auto* rp = static_cast<const uint8_t*>(rhs_packed);
  const size_t lhs_panel = kMr * k * 2, rhs_panel = L::panel_bytes(kNr, k);
  for (size_t j = 0; j < n; ++j) {
    const uint8_t* panel = rp + j / kNr * rhs_panel;
    const size_t r = j % kNr;
    for (size_t g = 0; g < k / L::kGroup; ++g) {
      const float s = f16(L::scale(panel, kNr, 0, r, g));  // d·sc exact in F32 (11 × 8 bits), rounded once
      float w[L::kGroup];
      for (size_t c = 0; c < L::kGroup; ++c) {
        // (q − 32)·s (6 × 11 bits) exact in F32: one rounding to F16
        w[c] = f16(static_cast<float>(L::value(panel, kNr, r, g * L::kGroup + c)) * s);
      }
      for (size_t i = 0; i < m; ++i) {
        const uint8_t* lpanel = lp + i / kMr * lhs_panel;
        float acc = g == 0 ? 0.0f : row(dst, stride, i)[j];
        for (size_t c = 0; c < L::kGroup; ++c) {
          const size_t kc = g * L::kGroup + c;
          const float a = fp16_to_fp32(layout::load_u16(lpanel + layout::panel_index(kMr, 2, i % kMr, kc) * 2));
          acc += a * w[c];  // the product of two F16 values is exact: one rounding, fused or not
        }
        row(dst, stride, i)[j] = acc;
      }
    }
    for (size_t i = 0; i < m; ++i) row(dst, stride, i)[j] = std::min(std::max(row(dst, stride, i)[j], lo), hi);
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_f16p4x2_q6kp8x4_4x8_scalar = {
    "matmul_clamp_f32_f16p4x2_q6kp8x4_4x8_scalar", Isa::scalar, WeightType::q6_k, false, params,
    &lhs_pack_f16pmrx2_f32, &rhs_pack_nxk_q6kp_q6k, run,
    &matmul_clamp_f32_f16p4x2_q6kp8x4_4x8_scalar};  // its own reference

}  // namespace qmm
