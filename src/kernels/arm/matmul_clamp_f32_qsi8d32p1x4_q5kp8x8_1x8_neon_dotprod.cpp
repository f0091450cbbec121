#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x4_q5kp8x8_1x8_neon_dotprod.h"

#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"
#include "kernels/arm/neon_kquants.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"

namespace qmm {

const Ukernel matmul_clamp_f32_qsi8d32p1x4_q5kp8x8_1x8_neon_dotprod = {"matmul_clamp_f32_qsi8d32p1x4_q5kp8x8_1x8_neon_dotprod", Isa::dotprod, WeightType::q5_k, true,
    neon::gemv_params_k, &lhs_quant_pack_qsi8d32pscalef16_f32_neon, &rhs_pack_nxk_q5kp_q5k, neon::run_gemv_k<neon::Q5kDecoder>};

}  // namespace qmm
