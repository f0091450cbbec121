// F16-weight GEMM for base NEON: dst[m, n] = clamp(lhs · rhsᵀ), F32 activations, F16 weights
// widened to F32 (FCVTL), F32 FMLA, in 8x8 output tiles.
//   LHS: lhs_pack_f32p_f32, mr = 8, kr = 1 (per column c: the 8 rows' F32 values).
//   RHS: rhs_pack_nxk_f16p_f16, nr = 8, kr = 1, sr = 1 (per column c: the 8 rows' F16 values;
//        shared with matmul_clamp_f32_f32p1x1_f16p8x1_1x8_neon).
//   m_step = 8, n_step = 8; any m, n, k (partial tiles are computed whole and stored in part).
// Each output is one F32 FMA chain in k order, like the scalar reference.
// Inner loop, per column c and 8x8 tile (64 F32 MACs): 1 LDR Q (8 weights), FCVTL + FCVTL2,
// 2 LDR Q (8 activations), 16 FMLA (by element, 4 MACs each) + loop control: 22 instructions
// per 64 MACs in the clang-19 -O2 disassembly (2.9 MACs per instruction, 16 of 22 are FMLA),
// no spills; 64 MACs per 48 bytes loaded.
// Why not FP16 arithmetic (FEAT_FP16 FMLA .8H, 8 MACs per instruction): it would round the
// activations and every partial sum to 11 bits, an error that grows with k (~1e-2 relative at
// k = 4096) instead of the F32 reference's ~1e-6; the widening costs 2 of 21 instructions here
// and nothing in the memory-bound GEMV.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f32p8x1_f16p8x1_8x8_neon;

}  // namespace qmm
