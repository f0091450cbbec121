// matmul_clamp_f32_qai8dxp1vlx4_qsi4cxp4vlx4_1vlx4vl_sme2_mopa: per-channel int4 (QC4) GEMM with SME2
// SMOPA on the packed operands of KleidiAI's SME (v1) kernel
// kai_matmul_clamp_f32_qai8dxp1vlx4_qsi4cxp4vlx4_1vlx4vl_sme_mopa (same mr nr kr sr, same packers).
// KleidiAI has no kernel of this name; its SME2 QC4 GEMM, ..._qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa,
// reads another layout (kr 4, sr 1; tests/data/kleidiai_kernels.txt).
//
// Packers (mr nr kr sr = VL 4·VL 8 2; VL = SVL/32, 16 at SVL 512):
//   LHS lhs_quant_pack_qai8dxp_f32     4-value chunks of VL rows = one SMOPA operand vector;
//   RHS rhs_pack_nxk_qsi4cxp_qs4cxs1s0 4-byte chunks of 4·VL rows = 4 vectors, low nibbles K
//       columns 32b+4t..+3, high nibbles 32b+16+4t..+3 (kernels/ref/rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h).
// m_step = VL, n_step = 4·VL; any k (K padded to 32); correct at any SVL 128..2048.
//
// Loop (kernels/arm/sme2_channel.h): ZA0..ZA3.S accumulate the whole of K in int32; per 32-block
// LD1B×4 ×2 (8 LHS vectors), 4 × { LD1B×4, SRSHL×4 (16·low nibble), 4 AND 0xF0 (16·high
// nibble), 8 SMOPA }: 58 instructions for 32 SMOPA = 32768 MACs at SVL 512 (565 MACs per
// instruction). Then once per output row: MOVA×4, 4 MLA (zero point), SCVTF×4, 8 FMUL + 4 FADD
// (scales, bias), FMAX + FMIN ×4, ST1W×4. Executed (scripts/count_instructions.py, m 64 n 256
// k 512, SVL 512): 0.00315 instructions per MAC (0.00317 through qmm_ukernel_run), 4.0× fewer than
// the Q4_0 SME2 GEMM, 1.21× fewer than KleidiAI's SME2 QC4 GEMM (docs/arm.md).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp1vlx4_qsi4cxp4vlx4_1vlx4vl_sme2_mopa;

}  // namespace qmm
