// Scalar kernel of the F16-activation Q5_K computation (qmm's
// matmul_clamp_f32_f16p1vlx2_q5kp4vlx4_1vlx4vl_sme2_mopa): its Ukernel::reference (the generated
// tests compare with it at the F32 summation-order tolerance) and, in the kernel list after the
// int8 scalar Q5_K GEMM, a portable kernel the tests run on every architecture (selection never
// prefers it). It is its own Ukernel::reference, as the F16 Q4_0, Q4_K and Q6_K twins are.
//
//   dst[i, j] = clamp(Σ_c a[i, c] · w[j, c], lo, hi), summed in F32 in c order, where
//   a = the F16 activation of lhs_pack_f16pmrx2_f32 and, per 32-element sub-block,
//   w = f16(q · f16(d·sc) − f16(dmin·m)) (kernels/ref/f16p_asymk_scalar.h, shared with Q4_K's).
//
// Packers: lhs_pack_f16pmrx2_f32 (mr 4), rhs_pack_nxk_q5kp_q5k (nr 8, kr 4, sr 2); m_step 4,
// n_step 8; k a multiple of 256.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f16p4x2_q5kp8x4_4x8_scalar;

}  // namespace qmm
