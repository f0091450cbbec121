#include "kernels/ref/matmul_clamp_f32_f16p_qsi4c32p_scalar.h"

#include <algorithm>

#include "core/fp16.h"
#include "kernels/ref/layouts.h"
#include "kernels/ref/lhs_pack_f16pmrx2_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0.h"

namespace qmm {
namespace {

constexpr size_t kMr = 4, kNr = 8;

TileParams params(size_t) { return {kMr, kNr, 4, 2, kMr, kNr}; }

float* row(float* dst, size_t stride, size_t i) { return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride); }

// Per column and 32-block: the block's 32 weights in F16, then each row's F32 sum carried on in
// dst (stored and reloaded exactly), in c order. No allocation (the microkernel contract).
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t stride,
         float lo, float hi) {
  const auto* lp = static_cast<const uint8_t*>(lhs_packed);
  const auto* rp = static_cast<const uint8_t*>(rhs_packed);
  const size_t lhs_panel = kMr * k * 2, rhs_panel = layout::qsi4c32ps1s0_panel_bytes(kNr, k);
  for (size_t j = 0; j < n; ++j) {
    const uint8_t* panel = rp + j / kNr * rhs_panel;
    for (size_t b = 0; b < k / kBlock; ++b) {
      const float d = layout::qsi4c32ps1s0_scale(panel, kNr, k, j % kNr, b);
      float w[kBlock];
      for (size_t c = 0; c < kBlock; ++c) {
        const int q = layout::qsi4c32ps1s0_value(panel, kNr, j % kNr, b * kBlock + c);
        w[c] = fp16_to_fp32(fp32_to_fp16(d * static_cast<float>(q)));  // d·q exact in F32, rounded once
      }
      for (size_t i = 0; i < m; ++i) {
        const uint8_t* lpanel = lp + i / kMr * lhs_panel;
        float acc = b == 0 ? 0.0f : row(dst, stride, i)[j];
        for (size_t c = 0; c < kBlock; ++c) {
          const float a = fp16_to_fp32(layout::load_u16(lpanel + layout::panel_index(kMr, 2, i % kMr, b * kBlock + c) * 2));
          acc += a * w[c];  // the product of two F16 values is exact: one rounding, fused or not
        }
        row(dst, stride, i)[j] = acc;
      }
    }
    for (size_t i = 0; i < m; ++i) row(dst, stride, i)[j] = std::min(std::max(row(dst, stride, i)[j], lo), hi);
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar = {
    "matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar", Isa::scalar, WeightType::q4_0, false, params,
    &lhs_pack_f16pmrx2_f32, &rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0, run,
    &matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar};  // its own reference (tests/test_f16_activations.cpp checks it)

}  // namespace qmm
