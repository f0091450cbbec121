// matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod: per-channel int4 (QC4) GEMV with SDOT
// (KleidiAI's kernel of the same name): the LHS row's 8 bytes replicated, 2 SDOT per 8 K and
// 4 columns. mr nr kr sr = 1 4 16 2, m_step 1, n_step 4; pairs with either QC4 NEON GEMM.
// Packers (mr nr kr sr): LHS lhs_quant_pack_qai8dxp_f32 (8-byte row chunks), RHS
// rhs_pack_nxk_qsi4cxp_qs4cxs1s0 (nr 4, kr 16, sr 2: 8-byte row chunks of 16 nibbles, KleidiAI's
// 4x4x32 layout; kernels/ref/rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h). The I8MM and DotProd GEMMs and the
// DotProd GEMV read the same packed RHS. Loops: kernels/arm/neon_channel.h.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod;

}  // namespace qmm
