// Scalar reference kernels for per-channel int4 weights (qc4) with per-row int8 activations:
// GEMM (4x8 tile) and GEMV (1x8), bias and clamp in the epilogue (kernels/ref/scalar_channel.h).
// Packers: lhs_quant_pack_qai8dxp_f32 (mr = 4 for the GEMM, 1 for the GEMV), rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0 (nr = 8);
// kr = 4, sr = 1; m_step = mr, n_step = nr.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp4x4_qsi4cxp8x4_4x8_scalar;
extern const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi4cxp8x4_1x8_scalar;

}  // namespace qmm
