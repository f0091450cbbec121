// Q4_0 GEMM for NEON I8MM: dst[m, n] = clamp(lhs · rhsᵀ) with int8 activations and int4
// weights, in 4x8 output tiles of 2x2 SMMLA blocks.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32_neon, mr = 4, kr = 16, sr = 2 (per block: 4 f16 scales,
//        then 4 chunks of 8 columns x 4 rows: a 16-byte load is SMMLA's 2x8 LHS operand).
//   RHS: rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0, nr = 8, kr = 16, sr = 2 (the same packed
//        weights as the DotProd GEMV/GEMM of Q4_0: a 16-byte load of one segment and two rows
//        gives, after SHL #4 / AND #0xf0, two 2x8 SMMLA RHS operands).
//   m_step = 4, n_step = 8; any m, n (partial tiles are computed whole and stored in part).
// Inner loop, per 32-block and 4x8 tile (1024 int8 MACs): 4 LDP (8 x 16 bytes) of weights,
// 4 LDP of activations, 8 SHL + 8 AND, 32 SMMLA (32 MACs each), then 8 SCVTF #4, scale set-up
// (1 LDR D + 1 LDR Q + 3 FCVTL, 2 ZIP + 4 DUP for the 2x2 scale patterns), 8 FMUL and 8 FMLA.
// Counted in the clang-19 -O2 disassembly: 103 instructions per block and tile, 32 of them
// SMMLA (~10 MACs per instruction), no spills; 1024 MACs per 272 bytes loaded (144 of weights,
// 128 of activations), i.e. ~3.8 MACs per byte.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_i8mm;

}  // namespace qmm
