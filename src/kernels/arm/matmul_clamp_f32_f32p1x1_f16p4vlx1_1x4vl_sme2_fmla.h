// matmul_clamp_f32_f32p1x1_f16p4vlx1_1x4vl_sme2_fmla: F16 weights × F32 activations, m = 1,
// with SME2 multi-vector FMLA into ZA. Reads the same packed RHS as the F16 SME2 GEMM.
//
// Packers: LHS lhs_pack_f32p_f32 (mr = 1, kr = 1: the k floats), RHS rhs_pack_nxk_f16p_f16
// (nr = 4·VL, kr = 1). VL = SVL/32; m_step = 1, n_step = nr. Correct at any SVL 128..2048.
//
// Output 1 × 4VL accumulated in ZA.S[0, VGx4]. Per 4 k: LD1RQW of 4 activations (replicated
// per 128-bit segment); per k: LD1H×2 the 4·VL weights, FCVT/FCVTLT -> 4 F32 vectors (even /
// odd columns), FMLA ZA.S[0, VGx4], {4 vectors}, lhs[j]. Tail k % 4: FMLA with a broadcast.
// At the end MOVA {4} <- ZA, ZIP×2 to restore the column order, FMAX×4 + FMIN×4 (sme2_clamp.h), ST1W×4.
//
// Inner-loop efficiency at SVL 512 (VL = 16), from the disassembly: per k, LD1H×2 + 4
// conversions + 1 FMLA (+ 1/4 LD1RQW) = 6.25 instructions for 64 MACs; 64 / 128 bytes of
// weights = 0.5 MACs per byte: bound by memory bandwidth.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f32p1x1_f16p4vlx1_1x4vl_sme2_fmla;

}  // namespace qmm
