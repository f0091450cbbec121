// matmul_clamp_f32_qsi8d32p1vlx4_q5kp4vlx4_1vlx4vl_sme2_mopa: Q5_K GEMM with SME2 SMOPA, output tile 1VL × 4VL.
//
// Packers:
//   LHS lhs_quant_pack_qsi8d32p_f32   mr = VL, kr = 4
//   RHS rhs_pack_nxk_q5kp_q5k          nr = 4·VL, kr = 4, sr = 2 (layout: kernels/ref/rhs_pack_nxk_kquants.h)
// VL = SVL/32 (16 at SVL 512); m_step = mr, n_step = nr. Correct at any SVL 128..2048.
//
// Per scale group, in two half passes of 2·VL columns (sme2_kquants.h KTiles): ZERO ZA0.S,
// ZA1.S; per 4-K quad the LHS quad, the weight decode of the half, 2 × SMOPA; then the scaling
// of sme2_matmul.h into the F32 sums in ZA2.S, ZA3.S (× d·scale per column, × s_lhs per row).
//
// Instruction counts per MAC against the Q4_0 kernels: docs/arm.md.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1vlx4_q5kp4vlx4_1vlx4vl_sme2_mopa;

}  // namespace qmm
