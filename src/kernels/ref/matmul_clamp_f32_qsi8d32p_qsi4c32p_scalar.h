// Scalar reference kernels for Q4_0 weights: GEMM (4x8 tile) and GEMV (1x8). They are the
// last-resort variants on every CPU and the oracle of every test: plain loops over the packed
// layouts (kernels/ref/scalar_matmul.h).
// Packers: lhs_quant_pack_qsi8d32p_f32 (mr = 4 for the GEMM, 1 for the GEMV), rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0 (nr = 8);
// kr = 4, sr = 2; m_step = mr, n_step = nr. The GEMV spells kr and sr (x4s2): KleidiAI's
// ..._qsi8d32p1x4_qsi4c32p8x4_1x8_sve_dotprod reads kr 8 (tests/test_kleidiai_names.cpp).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_qsi4c32p8x4_4x8_scalar;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4s2_qsi4c32p8x4s2_1x8_scalar;

}  // namespace qmm
