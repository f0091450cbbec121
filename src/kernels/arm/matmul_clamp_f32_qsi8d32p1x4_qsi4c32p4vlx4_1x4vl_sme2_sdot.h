// matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot: Q4_0 GEMV (m = 1) with SME2
// multi-vector SDOT. Reads the same packed RHS as the SME2 GEMM.
//
// Packers:
//   LHS lhs_quant_pack_qsi8d32p_f32                     mr = 1, kr = 4 (k int8, then k/32 f16)
//   RHS rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0  nr = 4·VL, kr = 4, sr = 2
// VL = SVL/32; m_step = 1, n_step = nr. Correct at any SVL 128..2048.
//
// Output 1 × 4VL. Per 32-block: MOVA zeros -> ZA.S[0, VGx4]; 2 × { LD1RQB 16 LHS bytes (4 quads,
// replicated into every 128-bit segment); 4 × { LD1B×2 the RHS quad, 2 × LUTI4 -> 4 int8
// vectors, SDOT ZA.S[0, VGx4], {4 vectors}, lhs[j] } }; then MOVA {4} <- ZA, SCVTF×4 and
// F32 multiply-add of s_lhs·s_rhs into 4 accumulator vectors; at the end FMAX×4 + FMIN×4
// (sme2_clamp.h) and one predicated ST1W×4.
//
// Inner-loop efficiency at SVL 512 (VL = 16), counted from the disassembly, per 32-block:
// 2 LD1RQB + 8 LD1B×2 + 16 LUTI4 + 8 SDOT(vgx4) = 34 instructions (+ ~20 of epilogue) for
// 32·64 = 2048 int8 MACs: 60 MACs per loop instruction; per byte loaded 2048 / (32 + 1024) =
// 1.9 (the weights dominate: a GEMV is bound by memory bandwidth, not by these instructions).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot;

}  // namespace qmm
