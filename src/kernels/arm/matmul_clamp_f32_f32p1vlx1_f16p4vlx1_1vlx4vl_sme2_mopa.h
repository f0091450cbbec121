// matmul_clamp_f32_f32p1vlx1_f16p4vlx1_1vlx4vl_sme2_mopa: F16 weights × F32 activations with
// SME2 FMOPA (F32 outer products; activations are not rounded to F16).
//
// Packers (kernels/ref/pack_float_panels.h):
//   LHS lhs_pack_f32p_f32      mr = VL, kr = 1: per k one vector of VL floats (rows of the panel)
//   RHS rhs_pack_nxk_f16p_f16  nr = 4·VL, kr = 1: per k the nr f16 of the panel's rows
// VL = SVL/32; m_step = mr, n_step = nr. Correct at any SVL 128..2048.
//
// Output tile 1VL × 4VL in ZA0.S..ZA3.S, accumulated over all of k (no per-block scales, so
// ZA is read back once per tile). Per k: LD1W the LHS vector, LD1H×2 the 4·VL weights,
// FCVT (even f16 lanes) and FCVTLT (odd lanes) of each -> 4 F32 vectors, 4 × FMOPA. Tile 0
// thus holds the even columns 0, 2, .. of the first 2·VL, tile 1 the odd ones (tiles 2, 3 the
// second 2·VL); the epilogue restores the order with ZIP×2 per pair of tiles, clamps
// (FMAX×4 + FMIN×4, sme2_clamp.h) and stores one predicated ST1W×4 per row.
//
// Inner-loop efficiency at SVL 512 (VL = 16), counted from the disassembly: per k, LD1W +
// LD1H×2 + 2 FCVT + 2 FCVTLT + 4 FMOPA = 10 instructions (the k loop unrolled by 4 adds ~1
// of loop overhead) for 4·16·16 = 1024 F32 MACs: ~100 MACs per instruction;
// 1024 / (64 + 128) = 5.3 MACs per byte loaded.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f32p1vlx1_f16p4vlx1_1vlx4vl_sme2_mopa;

}  // namespace qmm
