// matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_4x4_neon_dotprod: per-channel int8 (QC8) GEMM, 4 x 4 tile of
// SDOT (for CPUs without I8MM). mr nr kr sr = 4 4 8 1, m_step 4, n_step 4.
// Packers (mr nr kr sr): LHS lhs_quant_pack_qai8dxp_f32 (8-byte row chunks), RHS
// rhs_pack_nxk_qsi8cxp_qsi8cx (nr 4, kr 8, sr 1: 8-byte row chunks). The I8MM and DotProd GEMMs
// and the DotProd GEMV read the same packed RHS. Loops: kernels/arm/neon_channel.h.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_4x4_neon_dotprod;

}  // namespace qmm
