#include "kernels/arm/matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_4x4_neon_i8mm.h"

#include "kernels/arm/neon_channel.h"
#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi8cxp_qsi8cx.h"

namespace qmm {
namespace {

TileParams params(size_t) { return {4, 4, 8, 1, 4, 4}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_4x4_neon_i8mm = {"matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_4x4_neon_i8mm", Isa::i8mm, WeightType::qc8, false, params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi8cxp_qsi8cx, neonch::gemm<neonch::Qc8, neonch::I8mm>};

}  // namespace qmm
