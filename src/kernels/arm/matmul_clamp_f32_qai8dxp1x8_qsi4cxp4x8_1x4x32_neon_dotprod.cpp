#include "kernels/arm/matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod.h"

#include "kernels/arm/neon_channel.h"
#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h"

namespace qmm {
namespace {

TileParams params(size_t) { return {1, 4, 16, 2, 1, 4}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod = {"matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod", Isa::dotprod, WeightType::qc4, true, params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi4cxp_qs4cxs1s0, neonch::gemv<neonch::Qc4>};

}  // namespace qmm
