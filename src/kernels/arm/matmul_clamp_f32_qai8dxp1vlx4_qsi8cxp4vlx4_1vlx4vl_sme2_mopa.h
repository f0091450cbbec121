// matmul_clamp_f32_qai8dxp1vlx4_qsi8cxp4vlx4_1vlx4vl_sme2_mopa: per-channel int8 (QC8) GEMM with SME2
// SMOPA, KleidiAI's kernel of the same name on the same packed operands.
//
// Packers (mr nr kr sr = VL 4·VL 4 1): LHS lhs_quant_pack_qai8dxp_f32 (4-value chunks of VL rows),
// RHS rhs_pack_nxk_qsi8cxp_qsi8cx (4-value chunks of 4·VL rows = 4 SMOPA operand vectors).
// m_step = VL, n_step = 4·VL; any k; correct at any SVL 128..2048.
//
// Loop (kernels/arm/sme2_channel.h): ZA0..ZA3.S accumulate the whole of K; per 16 K LD1B×4 (4 LHS
// vectors), 4 × { LD1B×4, 4 SMOPA }: 21 instructions for 16 SMOPA = 16384 MACs at SVL 512 (780
// MACs per instruction); the per-row epilogue once, as in the QC4 GEMM. Executed (m 64 n 256
// k 512, SVL 512): 0.00293 instructions per MAC, 4.4× fewer than the Q4_0 SME2 GEMM, 1.24× fewer
// than KleidiAI's kernel of this name (docs/arm.md).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp1vlx4_qsi8cxp4vlx4_1vlx4vl_sme2_mopa;

}  // namespace qmm
