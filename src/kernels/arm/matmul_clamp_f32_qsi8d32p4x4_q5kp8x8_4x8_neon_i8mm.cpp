#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x4_q5kp8x8_4x8_neon_i8mm.h"

#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"
#include "kernels/arm/neon_kquants.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"

namespace qmm {

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q5kp8x8_4x8_neon_i8mm = {"matmul_clamp_f32_qsi8d32p4x4_q5kp8x8_4x8_neon_i8mm", Isa::i8mm, WeightType::q5_k, false,
    neon::gemm_params_k, &lhs_quant_pack_qsi8d32pscalef16_f32_neon, &rhs_pack_nxk_q5kp_q5k, neon::run_i8mm_k<neon::Q5kDecoder>};

}  // namespace qmm
