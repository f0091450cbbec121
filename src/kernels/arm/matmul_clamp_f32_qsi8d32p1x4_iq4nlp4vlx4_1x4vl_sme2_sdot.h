// matmul_clamp_f32_qsi8d32p1x4_iq4nlp4vlx4_1x4vl_sme2_sdot: IQ4_NL GEMV (m = 1) with SME2 multi-vector SDOT, reading
// the same packed RHS as the IQ4_NL SME2 GEMM.
//
// Packers:
//   LHS lhs_quant_pack_qsi8d32p_f32   mr = 1, kr = 4 (k int8, then k/32 f16 scales)
//   RHS rhs_pack_nxk_iq4nlp_iq4nl      nr = 4·VL, kr = 4, sr = 2 (layout: kernels/ref/rhs_pack_nxk_kquants.h)
// VL = SVL/32; m_step = 1, n_step = nr. Correct at any SVL 128..2048.
//
// Per scale group: zero ZA.S[0, VGx4]; LD1RQB the group's LHS bytes (16 per vector, replicated
// into every 128-bit segment); per 4-K quad the weight decode of sme2_kquants.h and SDOT
// ZA.S[0, VGx4] by lane; then MOVA, SCVTF and one F32 multiply-add of d·scale·s_lhs per
// column vector. FMAX + FMIN (sme2_clamp.h) before the one store.
//
// Instruction counts per MAC against the Q4_0 kernels: docs/arm.md.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp4vlx4_1x4vl_sme2_sdot;

}  // namespace qmm
