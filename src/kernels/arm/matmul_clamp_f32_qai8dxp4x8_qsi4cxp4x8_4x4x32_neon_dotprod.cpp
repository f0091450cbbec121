#include "kernels/arm/matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_dotprod.h"

#include "kernels/arm/neon_channel.h"
#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h"

namespace qmm {
namespace {

TileParams params(size_t) { return {4, 4, 16, 2, 4, 4}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_dotprod = {"matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_dotprod", Isa::dotprod, WeightType::qc4, false, params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi4cxp_qs4cxs1s0, neonch::gemm<neonch::Qc4, neonch::DotProd>};

}  // namespace qmm
