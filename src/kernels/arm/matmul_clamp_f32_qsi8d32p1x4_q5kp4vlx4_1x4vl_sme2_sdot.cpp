#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x4_q5kp4vlx4_1x4vl_sme2_sdot.h"

#include "kernels/arm/sme2_kquants.h"
#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

__arm_new("za", "zt0") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs,
                                                         const void* rhs, float* dst, size_t stride, float lo,
                                                         float hi) {
  sme2::gemv<sme2::Q5KWeights, sme2::KTiles>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p1x4_q5kp4vlx4_1x4vl_sme2_sdot = {
    "matmul_clamp_f32_qsi8d32p1x4_q5kp4vlx4_1x4vl_sme2_sdot", Isa::sme2, WeightType::q5_k, true, sme2_q4_gemv_params,
    &lhs_quant_pack_qsi8d32p_f32, &rhs_pack_nxk_q5kp_q5k, run};

}  // namespace qmm
