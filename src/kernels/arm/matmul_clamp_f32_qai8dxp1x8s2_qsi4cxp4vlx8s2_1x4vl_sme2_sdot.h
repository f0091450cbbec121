// matmul_clamp_f32_qai8dxp1x8s2_qsi4cxp4vlx8s2_1x4vl_sme2_sdot: per-channel int4 (QC4) GEMV with SME2
// multi-vector SDOT, reading the SME2 QC4 GEMM's packed RHS: the layout of KleidiAI's SME (v1) GEMV
// kai_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme_dot. The name spells kr 8, sr 2 (x8s2)
// because KleidiAI's ..._qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot reads kr 4, sr 1 (qmm used that
// name until tests/test_kleidiai_names.cpp; it is now qmm's kernel on KleidiAI's kr 4 layout).
//
// Packers (mr nr kr sr = 1 4·VL 8 2): LHS lhs_quant_pack_qai8dxp_f32 (one row: K int8 in order,
// -zp, scale), RHS rhs_pack_nxk_qsi4cxp_qs4cxs1s0 as for the GEMM. m_step = 1, n_step = 4·VL.
//
// Loop (kernels/arm/sme2_channel.h): ZA.S[0, VGx4] accumulates the whole of K; per 32-block
// LD1RQB ×2, 4 × { LD1B×4, SRSHL×4, 4 AND, SDOT vgx4 lane (low) + SDOT vgx4 lane (high) }.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp1x8s2_qsi4cxp4vlx8s2_1x4vl_sme2_sdot;

}  // namespace qmm
