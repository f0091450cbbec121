// Q4_0 GEMM for NEON DotProd: dst[m, n] = clamp(lhs · rhsᵀ) with int8 activations and int4
// weights, in 4x8 output tiles.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32, mr = 4, kr = 16, sr = 2 (per block: 4 f16 scales,
//        then 4 chunks of 8 columns x 4 rows).
//   RHS: rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0, nr = 8, kr = 16, sr = 2 (the same packed
//        weights as the DotProd GEMV and the I8MM GEMM of Q4_0).
//   m_step = 4, n_step = 8; any m, n (partial tiles are computed whole and stored in part).
// Inner loop, per 32-block and 4x8 tile (1024 int8 MACs): 8 x 16-byte weight loads, 8 SHL +
// 8 AND (nibbles -> int8 x16), 16 LD1R of 8-byte activation chunks (one per row and chunk,
// replicated so that a plain SDOT pairs them with 8 weights of two columns), 64 SDOT (16 MACs
// each), 8 ADDP folding the lane pairs, 8 SCVTF #4, and for the scales 1 LDR + 2 FCVTL
// (weights), 1 LDR D + 1 FCVTL (activations), 8 FMUL (by lane) and 8 FMLA. Counted in the
// clang-19 -O2 disassembly: 131 instructions per block and tile, 64 of them SDOT (7.8 MACs per
// instruction), 3 float accumulators spilled (3 loads + 2 stores per block); 1024 MACs per
// 272 bytes loaded (144 of weights + 128 of activations from 8-byte LD1Rs), ~3.8 MACs per byte.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_dotprod;

}  // namespace qmm
