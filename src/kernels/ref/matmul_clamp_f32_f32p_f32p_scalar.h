// Scalar reference kernels for F32 weights: GEMM (4x8 tile) and GEMV (1x8). They are the
// last-resort variants on every CPU and the oracle of every test: plain loops over the packed
// layouts (kernels/ref/scalar_matmul.h).
// Packers: lhs_pack_f32p_f32 (mr = 4 for the GEMM, 1 for the GEMV), rhs_pack_nxk_f32p_f32 (nr = 8);
// kr = 1, sr = 1; m_step = mr, n_step = nr.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f32p4x1_f32p8x1_4x8_scalar;
extern const Ukernel matmul_clamp_f32_f32p1x1_f32p8x1_1x8_scalar;

}  // namespace qmm
