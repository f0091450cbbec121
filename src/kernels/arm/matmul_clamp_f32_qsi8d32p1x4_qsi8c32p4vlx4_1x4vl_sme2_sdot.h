// matmul_clamp_f32_qsi8d32p1x4_qsi8c32p4vlx4_1x4vl_sme2_sdot: Q8_0 GEMV (m = 1) with SME2
// multi-vector SDOT. Reads the same packed RHS as the Q8_0 SME2 GEMM.
//
// Packers:
//   LHS lhs_quant_pack_qsi8d32p_f32            mr = 1, kr = 4
//   RHS rhs_pack_nxk_qsi8c32pscalef16_qsi8c32  nr = 4·VL, kr = 4 (layout: see the Q8_0 SME2 GEMM)
// VL = SVL/32; m_step = 1, n_step = nr. Correct at any SVL 128..2048.
//
// Per 32-block: ZERO ZA0.S; 2 × { LD1RQB 16 LHS bytes; 4 × { LD1B×4 the weight quad, SDOT
// ZA.S[0, VGx4], {4 vectors}, lhs[j] } }; then MOVA, SCVTF×4, the scales and one FMLA into the
// F32 sums in ZA.S[1, VGx4] (sme2_matmul.h's GEMV loop, shared with Q4_0); FMAX×4 + FMIN×4
// (sme2_clamp.h) and a predicated ST1W×4 at the end.
//
// Inner-loop efficiency at SVL 512 (VL = 16), per 32-block: 2 LD1RQB + 8 LD1B×4 + 8 SDOT =
// 18 instructions for 2048 int8 MACs (114 MACs per instruction); per byte loaded
// 2048 / (32 + 2048) ≈ 1: bound by memory bandwidth.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qsi8c32p4vlx4_1x4vl_sme2_sdot;

}  // namespace qmm
