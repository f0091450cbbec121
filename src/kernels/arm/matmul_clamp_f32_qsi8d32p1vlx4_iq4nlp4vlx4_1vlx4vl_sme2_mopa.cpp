#include "kernels/arm/matmul_clamp_f32_qsi8d32p1vlx4_iq4nlp4vlx4_1vlx4vl_sme2_mopa.h"

#include "kernels/arm/sme2_kquants.h"
#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

__arm_new("za", "zt0") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs,
                                                         const void* rhs, float* dst, size_t stride, float lo,
                                                         float hi) {
  sme2::gemm<sme2::Iq4nlWeights, sme2::KTiles>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p1vlx4_iq4nlp4vlx4_1vlx4vl_sme2_mopa = {
    "matmul_clamp_f32_qsi8d32p1vlx4_iq4nlp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, WeightType::iq4_nl, false, sme2_q4_gemm_params,
    &lhs_quant_pack_qsi8d32p_f32, &rhs_pack_nxk_iq4nlp_iq4nl, run};

}  // namespace qmm
