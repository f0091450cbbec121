// F32-weight GEMM for base NEON: dst[m, n] = clamp(lhs · rhsᵀ), F32 activations and weights,
// F32 FMLA, in 8x8 output tiles (the F16 kernel of the same shape without the widening).
//   LHS: lhs_pack_f32p_f32, mr = 8, kr = 1 (per column c: the 8 rows' F32 values).
//   RHS: rhs_pack_nxk_f32p_f32, nr = 8, kr = 1, sr = 1 (per column c: the 8 rows' F32 values;
//        shared with matmul_clamp_f32_f32p1x1_f32p8x1_1x8_neon).
//   m_step = 8, n_step = 8; any m, n, k (partial tiles are computed whole and stored in part).
// Each output is one F32 FMA chain in k order, like the scalar reference.
// Inner loop, per column c and 8x8 tile (64 F32 MACs): 2 LDR Q (8 weights), 2 LDR Q
// (8 activations), 16 FMLA (by element, 4 MACs each) + loop control; 64 MACs per 64 bytes.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f32p8x1_f32p8x1_8x8_neon;

}  // namespace qmm
