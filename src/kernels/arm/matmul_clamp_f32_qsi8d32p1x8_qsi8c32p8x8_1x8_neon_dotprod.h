// Q8_0 GEMV for NEON DotProd: dst[1, n] = clamp(lhs · rhsᵀ) with int8 activations and int8
// weights, one 8-column panel at a time.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32_neon, mr = 1, kr = 8, sr = 1 (per block: the f16 scale,
//        then 32 int8).
//   RHS: rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, nr = 8, kr = 8 (8-byte chunks of 8 rows, then
//        all f16 scales; shared with the DotProd and I8MM Q8_0 GEMMs).
//   m_step = 1, n_step = 8; any m (each row is its own panel), any n (partial last panel).
// Inner loop, per 32-block and 8 columns (256 int8 MACs): 16 x 16-byte weight loads (8 LDP),
// 4 LD1R of the 8-byte activation chunks, 16 SDOT (two lanes per column), 2 ADDP, 2 SCVTF,
// 1 LDR + 2 FCVTL (weight scales), 1 LDR H + FCVT (activation scale), 2 FMUL, 2 FMLA:
// 53 instructions in the clang-19 -O2 disassembly (~4.8 MACs per instruction); 256 MACs per
// 272 weight bytes (256 data + 16 scales) + 34 activation bytes. Bound by the weight stream
// (8.5 bits per weight).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1x8_qsi8c32p8x8_1x8_neon_dotprod;

}  // namespace qmm
