#include "kernels/ref/matmul_clamp_f32_f16p_q5kp_scalar.h"

#include "kernels/ref/f16p_asymk_scalar.h"
#include "kernels/ref/lhs_pack_f16pmrx2_f32.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"

namespace qmm {

const Ukernel matmul_clamp_f32_f16p4x2_q5kp8x4_4x8_scalar = {
    "matmul_clamp_f32_f16p4x2_q5kp8x4_4x8_scalar", Isa::scalar, WeightType::q5_k, false, f16p::params,
    &lhs_pack_f16pmrx2_f32, &rhs_pack_nxk_q5kp_q5k, f16p::run<f16p::AsymK<layout::Q5kp>>,
    &matmul_clamp_f32_f16p4x2_q5kp8x4_4x8_scalar};  // its own reference

}  // namespace qmm
