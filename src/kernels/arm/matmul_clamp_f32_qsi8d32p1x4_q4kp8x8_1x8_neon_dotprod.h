// Q4_K GEMV for NEON DotProd (SDOT on LD1R-replicated activations), one 8-column panel at a time.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32_neon, mr = 1, kr = 8, sr = 2 (4-element groups).
//   RHS: rhs_pack_nxk_q4kp_q4k (kernels/ref/rhs_pack_nxk_kquants.h), nr = 8, kr = 8, sr = 2: the NEON
//        preset, one packed RHS shared by the Q4_K DotProd GEMV, DotProd GEMM and I8MM GEMM.
//   m_step = 1, n_step = 8; any m, n (partial tiles are computed whole and stored in part).
// Loop and decoder: kernels/arm/neon_kquants.h; instruction counts: docs/neon.md.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x8_1x8_neon_dotprod;

}  // namespace qmm
