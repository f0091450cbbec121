// matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa: Q4_0 GEMM with SME2 SMOPA.
//
// Packers (docs/design.md §5, byte-identical to KleidiAI's SME2 packers):
//   LHS lhs_quant_pack_qsi8d32p_f32                     mr = VL, kr = 4
//   RHS rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0  nr = 4·VL, kr = 4, sr = 2
// VL = SVL/32 (16 at SVL 512); m_step = mr, n_step = nr. Correct at any SVL 128..2048 (the
// kernel reads svcntw() at run time; params(svl_bytes) answers for any SVL).
//
// Output tile 1VL × 4VL. Per 32-block: ZERO {ZA}; 8 × { LD1B the LHS quad (VL rows × 4 int8 =
// one vector), LD1B×2 the RHS quad (4·VL rows × 4 nibbles = 2 vectors), 2 × LUTI4 {2 × .B}
// from ZT0 (-8..7 indexed by the unsigned nibble: zero point 8 folded in) -> 4 int8 vectors,
// 4 × SMOPA into ZA0.S..ZA3.S }; then per output row i: MOVA {4 vectors} <- ZA0H.B[4i..4i+3]
// (row i of all four tiles), SCVTF ×4, FMUL ×4 by the RHS scales (per column), FMLA ×4 by
// element with the LHS scale of row i (LD1RQW of four rows' scales), add to the row in dst
// (dst is the F32 accumulator: the first block stores, the last one clamps with FMAX ×4 +
// FMIN ×4, sme2_clamp.h).
//
// Efficiency at SVL 512 (VL = 16), counted from the disassembly (clang 19 -O2):
//  - steady state, per 4-K quad: LD1B + LD1B×2 + 2 LUTI4 + 4 SMOPA = 8 instructions (the quad
//    loop is fully unrolled, immediate offsets) for 4·16·16·4 = 4096 int8 MACs: 512 MACs per
//    instruction, 4096 / (64 + 128) = 21.3 MACs per byte loaded (LHS 64 B, RHS 128 B);
//  - per 32-block (8 quads = 64 instructions, 32768 MACs) the epilogue adds per output row
//    12 vector instructions (MOVA, SCVTF, 4 FMUL, LD1W×4, 4 FMLA, ST1W×4) + ~6 scalar ones,
//    i.e. ~290 instructions for 16 rows: overall ~93 MACs per instruction. The 32-value block
//    with its own scales is what makes the epilogue dominate (KleidiAI's kernel has the same
//    structure); the SMOPA part alone would run at 512.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa;

}  // namespace qmm
