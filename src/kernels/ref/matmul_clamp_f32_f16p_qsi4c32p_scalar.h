// Scalar kernel of the F16-activation Q4_0 computation (KleidiAI's
// matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa and qmm's kernel of that name):
// the Ukernel::reference of the SME2 kernel (the generated tests compare with it at the F32
// summation-order tolerance) and, in the kernel list after the int8 scalar Q4_0 GEMM, a
// portable kernel the tests run on every architecture (selection never prefers it). It is its
// own Ukernel::reference: the int8 scalar GEMM is no oracle for it (its activation rounding
// errs more than the F16 one); tests/test_f16_activations.cpp checks it against the F32
// product of the F16 values it reads, and against the unrounded product.
//
//   dst[i, j] = clamp(Σ_c a[i, c] · w[j, c], lo, hi), summed in F32 in c order, where
//   a = the F16 activation of lhs_pack_f16pmrx2_f32 and w = f16(d · (q − 8)): the block's f16
//   scale times the signed nibble, rounded once to F16 (the SME2 kernel's F16 FMUL). The
//   products of two F16 values are exact in F32.
//
// Packers: lhs_pack_f16pmrx2_f32 (mr 4), rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0 (nr 8);
// kr 4, sr 2 (the LHS holds kr/sr = 2 values of a row together); m_step 4, n_step 8.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar;

}  // namespace qmm
