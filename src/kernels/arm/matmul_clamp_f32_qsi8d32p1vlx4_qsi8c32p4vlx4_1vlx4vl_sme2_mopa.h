// matmul_clamp_f32_qsi8d32p1vlx4_qsi8c32p4vlx4_1vlx4vl_sme2_mopa: Q8_0 GEMM with SME2 SMOPA.
//
// Packers:
//   LHS lhs_quant_pack_qsi8d32p_f32            mr = VL, kr = 4
//   RHS rhs_pack_nxk_qsi8c32pscalef16_qsi8c32  nr = 4·VL, kr = 4 (sr = 1): per nr-row panel, the
//       int8 of (row r, column c) at (c/4)·nr·4 + r·4 + c%4, then the f16 d of (block b, row r)
//       at index b·nr + r. A 4-K quad of the panel is then exactly 4 SMOPA operand vectors.
// VL = SVL/32 (16 at SVL 512); m_step = mr, n_step = nr. Correct at any SVL 128..2048.
//
// Same loop as the Q4_0 SME2 GEMM (kernels/arm/sme2_matmul.h: two half passes of 2·VL columns,
// the F32 sums in ZA2.S, ZA3.S) with LD1B×2 of the weight half quad in place of LD1B + LUTI4:
// per 32-block ZERO ZA0.S, ZA1.S, LD1B×4 ×2 LHS, 8 × { LD1B×2 RHS, 2 × SMOPA }, then the scaling
// into the F32 sums (MOVA, SCVTF, 4 FMUL by element, FMLA per 4 output vectors).
//
// Executed at SVL 512, 64 × 256 × 512: 64,995 instructions, 0.0077 per MAC (docs/arm.md).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1vlx4_qsi8c32p4vlx4_1vlx4vl_sme2_mopa;

}  // namespace qmm
