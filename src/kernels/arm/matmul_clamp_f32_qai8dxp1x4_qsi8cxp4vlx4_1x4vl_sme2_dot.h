// matmul_clamp_f32_qai8dxp1x4_qsi8cxp4vlx4_1x4vl_sme2_dot: per-channel int8 (QC8) GEMV with SME2
// multi-vector SDOT, reading the SME2 QC8 GEMM's packed RHS.
//
// Packers (mr nr kr sr = 1 4·VL 4 1): LHS lhs_quant_pack_qai8dxp_f32, RHS rhs_pack_nxk_qsi8cxp_qsi8cx.
// m_step = 1, n_step = 4·VL.
//
// Loop (kernels/arm/sme2_channel.h): ZA.S[0, VGx4] accumulates the whole of K; per 16 K LD1RQB,
// 4 × { LD1B×4, SDOT vgx4 lane }.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi8cxp4vlx4_1x4vl_sme2_dot;

}  // namespace qmm
