#include "kernels/ref/matmul_clamp_f32_f16p_qsi4c32p_scalar.h"

#include "kernels/ref/f16p_scalar.h"
#include "kernels/ref/lhs_pack_f16pmrx2_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0.h"

namespace qmm {
namespace {

// The block decoder of f16p::run: one 32-block.
struct Q4_0 {
  static constexpr size_t kLen = kBlock;
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi4c32ps1s0_panel_bytes(nr, k); }
  static void weights(const uint8_t* panel, size_t nr, size_t k, size_t r, size_t b, float* w) {
    const float d = layout::qsi4c32ps1s0_scale(panel, nr, k, r, b);
    for (size_t c = 0; c < kLen; ++c) {
      const int q = layout::qsi4c32ps1s0_value(panel, nr, r, b * kLen + c);
      w[c] = f16p::f16(d * static_cast<float>(q));  // d·q exact in F32, rounded once
    }
  }
};

}  // namespace

const Ukernel matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar = {
    "matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar", Isa::scalar, WeightType::q4_0, false, f16p::params,
    &lhs_pack_f16pmrx2_f32, &rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0, f16p::run<Q4_0>,
    &matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar};  // its own reference (tests/test_f16_activations.cpp checks it)

}  // namespace qmm
