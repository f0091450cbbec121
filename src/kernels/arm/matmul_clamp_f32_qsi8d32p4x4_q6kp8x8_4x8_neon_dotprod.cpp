#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x4_q6kp8x8_4x8_neon_dotprod.h"

#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"
#include "kernels/arm/neon_kquants.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"

namespace qmm {

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q6kp8x8_4x8_neon_dotprod = {"matmul_clamp_f32_qsi8d32p4x4_q6kp8x8_4x8_neon_dotprod", Isa::dotprod, WeightType::q6_k, false,
    neon::gemm_params_k, &lhs_quant_pack_qsi8d32pscalef16_f32_neon, &rhs_pack_nxk_q6kp_q6k, neon::run_dotprod_k<neon::Q6kDecoder>};

}  // namespace qmm
