// Q4_0 GEMV for NEON DotProd: dst[1, n] = clamp(lhs · rhsᵀ) with int8 activations and int4
// weights, one 8-column panel at a time.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32_neon, mr = 1, kr = 16, sr = 2 (per block: the f16 scale,
//        then 32 int8 in 8-byte chunks).
//   RHS: rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0, nr = 8, kr = 16, sr = 2 (shared with the
//        DotProd and I8MM Q4_0 GEMMs of this family).
//   m_step = 1, n_step = 8; any m (each row is its own panel), any n (partial last panel).
// Inner loop, per 32-block and 8 columns (256 int8 MACs): 8 x 16-byte weight loads (4 LDP),
// 8 SHL + 8 AND (nibbles -> int8 x16), 4 LD1R of the 8-byte activation chunks replicated,
// 16 SDOT (.4S; each 4-lane group dots 4 weights of one column with 4 activations, two lanes
// per column), 2 ADDP to fold the lane pairs, 2 SCVTF #4 (undoes the x16), then the scales:
// 1 LDR + 2 FCVTL for the 8 weight scales, 1 LDR H + FCVT for the activation scale, 2 FMUL and
// 2 FMLA. Counted in the clang-19 -O2 disassembly: 65 instructions per block and panel, 16 of
// them SDOT (~3.9 MACs per instruction); 256 MACs per 144 weight bytes (128 data + 16 scales,
// 1.8 MACs per weight byte) + 34 activation bytes. A GEMV is bound by the weight stream (4.5
// bits per weight), not by the SDOTs.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p1x8_qsi4c32p8x8_1x8_neon_dotprod;

}  // namespace qmm
