#include "kernels/arm/matmul_clamp_f32_qai8dxp1x4_qsi8cxp4vlx4_1x4vl_sme2_dot.h"

#include "kernels/arm/sme2_channel.h"
#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi8cxp_qsi8cx.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

__arm_new("za", "zt0") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst,
                                                 size_t stride, float lo, float hi) {
  sme2ch::gemv<sme2ch::Qc8>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi8cxp4vlx4_1x4vl_sme2_dot = {"matmul_clamp_f32_qai8dxp1x4_qsi8cxp4vlx4_1x4vl_sme2_dot", Isa::sme2, WeightType::qc8, true, sme2_qc8_gemv_params,
    &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi8cxp_qsi8cx, run};

}  // namespace qmm
