// F32-weight GEMV for base NEON: dst[1, n] = clamp(lhs · rhsᵀ), F32 activations and weights,
// F32 FMLA, one 8-column panel at a time (the F16 GEMV without the widening).
//   LHS: lhs_pack_f32p_f32, mr = 1, kr = 1 (the row itself).
//   RHS: rhs_pack_nxk_f32p_f32, nr = 8, kr = 1, sr = 1 (shared with
//        matmul_clamp_f32_f32p8x1_f32p8x1_8x8_neon).
//   m_step = 1, n_step = 8; any m (each row its own panel), n, k.
// Four FMA chains per column (k split round-robin in 4, summed at the end) hide the FMLA
// latency. Inner loop, per 4 columns of k and 8 outputs (32 MACs): 4 LDP Q (32 weights),
// 1 LDR Q (4 activations), 8 FMLA (by element); 128 weight bytes: bound by the weight stream.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f32p1x1_f32p8x1_1x8_neon;

}  // namespace qmm
