// matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa: Q4_0 GEMM with SME2 SMOPA.
//
// Packers (docs/design.md §5, byte-identical to KleidiAI's SME2 packers):
//   LHS lhs_quant_pack_qsi8d32p_f32                     mr = VL, kr = 4
//   RHS rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0  nr = 4·VL, kr = 4, sr = 2
// VL = SVL/32 (16 at SVL 512); m_step = mr, n_step = nr. Correct at any SVL 128..2048 (the
// kernel reads svcntw() at run time; params(svl_bytes) answers for any SVL).
//
// Output tile 1VL × 4VL, in two half passes of 2·VL columns (sme2_matmul.h). Per 32-block:
// ZERO ZA0.S, ZA1.S; LD1B×4 ×2 the 8 LHS quads (VL rows × 4 int8 each); 8 × { LD1B the half
// quad (2·VL rows × 4 nibbles = one vector), LUTI4 {2 × .B} from ZT0 (-8..7 indexed by the
// unsigned nibble: zero point 8 folded in) -> 2 int8 vectors, 2 SMOPA into ZA0.S, ZA1.S }; then
// per ZA vector group (4 rows of one tile): MOVA ×4, SCVTF ×4, 4 FMUL by element (RHS scales of
// the columns × the LHS scale of each row, the LHS scales regrouped by one TBL per block) and one
// FMLA ×4 into the F32 sums in ZA2.S, ZA3.S. After the last block each row of the F32 sums is
// clamped (FMAX + FMIN ×2, sme2_clamp.h's rule) and stored once.
//
// Efficiency at SVL 512 (VL = 16), executed under qemu (docs/arm.md, 64 × 256 × 512): 69,095
// instructions, 0.0082 per MAC (0.0128 when each block's sums went through dst: ~20
// instructions per output row and block). Per block and half pass: 8 × 4 instructions of SMOPA
// work, 2 LHS loads, 8 for the scales, 4 × 17 for the scaling (VL/4 row groups × 2 tiles).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa;

}  // namespace qmm
