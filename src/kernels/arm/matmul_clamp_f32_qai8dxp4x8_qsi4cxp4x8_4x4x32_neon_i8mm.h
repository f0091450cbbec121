// matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm: per-channel int4 (QC4) GEMM, 4 x 4 tile of
// SMMLA (KleidiAI's kernel of the same name on the same packed operands): per 16 K, 2 LD1 RHS,
// 2 SHL + 2 AND (16·nibbles), 4 LD1 LHS, 8 SMMLA; int32 sums over all of K, epilogue once.
// mr nr kr sr = 4 4 16 2, m_step 4, n_step 4.
// Packers (mr nr kr sr): LHS lhs_quant_pack_qai8dxp_f32 (8-byte row chunks), RHS
// rhs_pack_nxk_qsi4cxp_qs4cxs1s0 (nr 4, kr 16, sr 2: 8-byte row chunks of 16 nibbles, KleidiAI's
// 4x4x32 layout; kernels/ref/rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h). The I8MM and DotProd GEMMs and the
// DotProd GEMV read the same packed RHS. Loops: kernels/arm/neon_channel.h.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm;

}  // namespace qmm
