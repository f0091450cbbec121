// matmul_clamp_f32_qsi8d32p1vlx4_qsi8c32p4vlx4_1vlx4vl_sme2_mopa: Q8_0 GEMM with SME2 SMOPA.
//
// Packers:
//   LHS lhs_quant_pack_qsi8d32p_f32            mr = VL, kr = 4
//   RHS rhs_pack_nxk_qsi8c32pscalef16_qsi8c32  nr = 4·VL, kr = 4 (sr = 1): per nr-row panel, the
//       int8 of (row r, column c) at (c/4)·nr·4 + r·4 + c%4, then the f16 d of (block b, row r)
//       at index b·nr + r. A 4-K quad of the panel is then exactly 4 SMOPA operand vectors.
// VL = SVL/32 (16 at SVL 512); m_step = mr, n_step = nr. Correct at any SVL 128..2048.
//
// Same loop as the Q4_0 SME2 GEMM (kernels/arm/sme2_matmul.h) with LD1B×4 of the weight quad in
// place of LD1B×2 + 2 LUTI4: per 32-block ZERO {ZA}, 8 × { LD1B LHS, LD1B×4 RHS, 4 × SMOPA },
// then the per-row MOVA/SCVTF/scale/accumulate epilogue into dst.
//
// Inner-loop efficiency at SVL 512 (VL = 16), per 4-K quad: 1 LD1B + 1 LD1B×4 + 4 SMOPA = 6
// instructions for 4096 int8 MACs: 683 MACs per instruction, 4096 / (64 + 256) = 12.8 MACs per
// byte loaded. The per-block epilogue (~18 instructions per output row) is the Q4_0 kernel's:
// ~100 MACs per instruction overall.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1vlx4_qsi8c32p4vlx4_1vlx4vl_sme2_mopa;

}  // namespace qmm
