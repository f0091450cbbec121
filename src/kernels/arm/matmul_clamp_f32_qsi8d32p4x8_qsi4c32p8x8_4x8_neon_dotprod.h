// Q4_0 GEMM for NEON DotProd: dst[m, n] = clamp(lhs · rhsᵀ) with int8 activations and int4
// weights, in 4x8 output tiles.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32_neon, mr = 4, kr = 16, sr = 2 (per block: 4 f16 scales,
//        then 4 chunks of 8 columns x 4 rows).
//   RHS: rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0, nr = 8, kr = 16, sr = 2 (the same packed
//        weights as the DotProd GEMV and the I8MM GEMM of Q4_0).
//   m_step = 4, n_step = 8; any m, n (partial tiles are computed whole and stored in part).
// Technique: the LHS chunks (8 columns x rows 0,1 | rows 2,3) are sorted by UZP1/UZP2 on
// 32-bit lanes into 8 registers a[g] = k-group g (4 columns) of rows 0..3, one row per lane;
// each weight register (8 columns of 2 weight rows after SHL #4 / AND #0xf0) then feeds 4
// lane-indexed SDOTs, so an int32 accumulator holds one output column for the 4 rows (no
// activation replication, no pairwise folding); the tile is transposed once at the store.
// Inner loop, per 32-block and 4x8 tile (1024 int8 MACs): 8 LDR Q of activations + 8 UZP,
// 8 LDR Q of weights + 8 SHL + 8 AND, 64 SDOT (by element, 16 MACs each), 8 SCVTF #4, scales
// (LDR D + LDR Q, 3 FCVTL), 8 FMUL (by lane) + 8 FMLA. Counted in the clang-19 -O2
// disassembly: 133 instructions per block and tile, 64 of them SDOT (7.7 MACs per
// instruction), no spills; 1024 MACs per 272 bytes loaded (144 of weights, 128 of
// activations). llvm-mca: 63 cycles per block on Neoverse N1 (16 MACs/cycle, half of the
// 2-SDOT/cycle peak), 31.5 on Neoverse V1.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_dotprod;

}  // namespace qmm
