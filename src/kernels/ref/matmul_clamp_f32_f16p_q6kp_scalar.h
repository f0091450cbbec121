// Scalar kernel of the F16-activation Q6_K computation (qmm's
// matmul_clamp_f32_f16p1vlx2_q6kp4vlx4_1vlx4vl_sme2_mopa): its Ukernel::reference (the generated
// tests compare with it at the F32 summation-order tolerance) and, in the kernel list after the
// int8 scalar Q6_K GEMM, a portable kernel the tests run on every architecture (selection never
// prefers it). It is its own Ukernel::reference, as the F16 Q4_0 and Q4_K twins are.
//
//   dst[i, j] = clamp(Σ_c a[i, c] · w[j, c], lo, hi), summed in F32 in c order, where
//   a = the F16 activation of lhs_pack_f16pmrx2_f32 and, per 16-element scale group,
//   w = f16((q − 32) · f16(d·sc)): the int8 scale times the super-block's f16 d rounded to F16,
//   then the weight rounded once (the SME2 kernel's FMUL, FSUB (exact) and FMUL).
//
// Packers: lhs_pack_f16pmrx2_f32 (mr 4), rhs_pack_nxk_q6kp_q6k (nr 8, kr 4, sr 2); m_step 4,
// n_step 8; k a multiple of 256.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f16p4x2_q6kp8x4_4x8_scalar;

}  // namespace qmm
