// IQ4_NL GEMM for NEON I8MM, 4x8 tiles of 2x2 SMMLA blocks.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32_neon, mr = 4, kr = 8, sr = 2 (4-element groups).
//   RHS: rhs_pack_nxk_iq4nlp_iq4nl (kernels/ref/rhs_pack_nxk_kquants.h), nr = 8, kr = 8, sr = 2: the NEON
//        preset, one packed RHS shared by the IQ4_NL DotProd GEMV, DotProd GEMM and I8MM GEMM.
//   m_step = 4, n_step = 8; any m, n (partial tiles are computed whole and stored in part).
// Loop and decoder: kernels/arm/neon_kquants.h; instruction counts: docs/neon.md.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x8_4x8_neon_i8mm;

}  // namespace qmm
