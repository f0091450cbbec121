// Scalar kernel of the F16-activation Q4_K computation (qmm's
// matmul_clamp_f32_f16p1vlx2_q4kp4vlx4_1vlx4vl_sme2_mopa): its Ukernel::reference (the generated
// tests compare with it at the F32 summation-order tolerance) and, in the kernel list after the
// int8 scalar Q4_K GEMM, a portable kernel the tests run on every architecture (selection never
// prefers it). It is its own Ukernel::reference, as the F16 Q4_0 twin is. Its weight decoder,
// kernels/ref/f16p_asymk_scalar.h, is shared with the Q5_K twin; its loop (kernels/ref/f16p_scalar.h)
// with all four F16 twins.
//
//   dst[i, j] = clamp(Σ_c a[i, c] · w[j, c], lo, hi), summed in F32 in c order, where
//   a = the F16 activation of lhs_pack_f16pmrx2_f32 and, per 32-element sub-block,
//   w = f16(q · f16(d·sc) − f16(dmin·m)): the 6-bit factors times the super-block's f16 d / dmin,
//   each rounded to F16, then the weight rounded once (the SME2 kernel's FMUL and FNMSB).
//
// Packers: lhs_pack_f16pmrx2_f32 (mr 4), rhs_pack_nxk_q4kp_q4k (nr 8, kr 4, sr 2); m_step 4,
// n_step 8; k a multiple of 256.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f16p4x2_q4kp8x4_4x8_scalar;

}  // namespace qmm
