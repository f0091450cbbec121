// matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot: Q4_0 GEMV (m = 1) with SME2
// multi-vector SDOT. Reads the same packed RHS as the SME2 GEMM.
//
// Packers:
//   LHS lhs_quant_pack_qsi8d32p_f32                     mr = 1, kr = 4 (k int8, then k/32 f16)
//   RHS rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0  nr = 4·VL, kr = 4, sr = 2
// VL = SVL/32; m_step = 1, n_step = nr. Correct at any SVL 128..2048.
//
// Output 1 × 4VL. Per 32-block: ZERO ZA0.S; LD1RQB ×2 (16 LHS bytes each, replicated into every
// 128-bit segment); 4 × { LD1B×4 two RHS quads, 4 × LUTI4 -> 8 int8 vectors, 2 × SDOT
// ZA.S[0, VGx4], {4 vectors}, lhs[j] }; then MOVA {4} <- ZA0.S, SCVTF×4, the scales (LD1RH + FCVT,
// LD1H×2 + UUNPK + 4 FCVT, 4 FMUL) and one FMLA into the F32 sums in ZA.S[1, VGx4]; at the end
// FMAX×4 + FMIN×4 (sme2_clamp.h) and one predicated ST1W×4. KleidiAI's bits.
//
// Counted (docs/arm.md): 53 instructions per 32-block (KleidiAI's kernel of this name: 60), of
// them 4 LD1B×4 + 16 LUTI4 + 8 SDOT for 32·64 = 2048 int8 MACs at SVL 512; per byte loaded
// 2048 / (32 + 1024) = 1.9 (the weights dominate: a GEMV is bound by memory bandwidth).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot;

}  // namespace qmm
