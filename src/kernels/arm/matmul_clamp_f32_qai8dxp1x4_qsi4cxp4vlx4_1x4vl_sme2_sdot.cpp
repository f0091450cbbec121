#include "kernels/arm/matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot.h"

#include "kernels/arm/sme2_channel.h"
#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

// The tile loop is sme2_channel.h's; ZT0 holds the signed int4 values for LUTI4.
__arm_new("za", "zt0") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs,
                                                         float* dst, size_t stride, float lo, float hi) {
  sme2ch::Qc4Kai::load_table();
  sme2ch::gemv<sme2ch::Qc4Kai>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot = {
    "matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot", Isa::sme2, WeightType::qc4, true,
    sme2_qc4_kai_gemv_params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, run};

}  // namespace qmm
