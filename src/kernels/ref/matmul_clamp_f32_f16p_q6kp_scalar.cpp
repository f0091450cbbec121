#include "kernels/ref/matmul_clamp_f32_f16p_q6kp_scalar.h"

#include "kernels/ref/f16p_scalar.h"
#include "kernels/ref/layouts_k.h"
#include "kernels/ref/lhs_pack_f16pmrx2_f32.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"

namespace qmm {
namespace {

// The block decoder of f16p::run: one 16-element scale group.
struct Q6k {
  using L = layout::Q6kp;
  static constexpr size_t kLen = L::kGroup;
  static size_t panel_bytes(size_t nr, size_t k) { return L::panel_bytes(nr, k); }
  static void weights(const uint8_t* panel, size_t nr, size_t, size_t r, size_t g, float* w) {
    const float s = f16p::f16(L::scale(panel, nr, 0, r, g));  // d·sc exact in F32 (11 × 8 bits), rounded once
    for (size_t c = 0; c < kLen; ++c) {
      // (q − 32)·s (6 × 11 bits) exact in F32: one rounding to F16
      w[c] = f16p::f16(static_cast<float>(L::value(panel, nr, r, g * kLen + c)) * s);
    }
  }
};

}  // namespace

const Ukernel matmul_clamp_f32_f16p4x2_q6kp8x4_4x8_scalar = {
    "matmul_clamp_f32_f16p4x2_q6kp8x4_4x8_scalar", Isa::scalar, WeightType::q6_k, false, f16p::params,
    &lhs_pack_f16pmrx2_f32, &rhs_pack_nxk_q6kp_q6k, f16p::run<Q6k>,
    &matmul_clamp_f32_f16p4x2_q6kp8x4_4x8_scalar};  // its own reference

}  // namespace qmm
