// matmul_clamp_f32_qai8dxp1x8_qsi8cxp4x8_1x4_neon_dotprod: per-channel int8 (QC8) GEMV with SDOT: the
// LHS row's 8 bytes replicated, 2 SDOT per 8 K and 4 columns. mr nr kr sr = 1 4 8 1, steps 1 / 4.
// Packers (mr nr kr sr): LHS lhs_quant_pack_qai8dxp_f32 (8-byte row chunks), RHS
// rhs_pack_nxk_qsi8cxp_qsi8cx (nr 4, kr 8, sr 1: 8-byte row chunks). The I8MM and DotProd GEMMs
// and the DotProd GEMV read the same packed RHS. Loops: kernels/arm/neon_channel.h.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi8cxp4x8_1x4_neon_dotprod;

}  // namespace qmm
