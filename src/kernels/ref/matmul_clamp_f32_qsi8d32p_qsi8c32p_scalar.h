// Scalar reference kernels for Q8_0 weights: GEMM (4x8 tile) and GEMV (1x8). They are the
// last-resort variants on every CPU and the oracle of every test: plain loops over the packed
// layouts (kernels/ref/scalar_matmul.h).
// Packers: lhs_quant_pack_qsi8d32p_f32 (mr = 4 for the GEMM, 1 for the GEMV), rhs_pack_nxk_qsi8c32pscalef16_qsi8c32 (nr = 8);
// kr = 4, sr = 1; m_step = mr, n_step = nr.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_qsi8c32p8x4_4x8_scalar;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qsi8c32p8x4_1x8_scalar;

}  // namespace qmm
