#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x4_q4kp8x8_1x8_neon_dotprod.h"

#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"
#include "kernels/arm/neon_kquants.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"

namespace qmm {

const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x8_1x8_neon_dotprod = {"matmul_clamp_f32_qsi8d32p1x4_q4kp8x8_1x8_neon_dotprod", Isa::dotprod, WeightType::q4_k, true,
    neon::gemv_params_k, &lhs_quant_pack_qsi8d32pscalef16_f32_neon, &rhs_pack_nxk_q4kp_q4k, neon::run_gemv_k<neon::Q4kDecoder>};

}  // namespace qmm
