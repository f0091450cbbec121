// Q8_0 GEMM for NEON DotProd: dst[m, n] = clamp(lhs · rhsᵀ) with int8 activations and int8
// weights, in 4x8 output tiles.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32_neon, mr = 4, kr = 8, sr = 1 (per block: 4 f16 scales,
//        then 4 chunks of 8 columns x 4 rows).
//   RHS: rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, nr = 8, kr = 8 (shared with the Q8_0 DotProd
//        GEMV and I8MM GEMM).
//   m_step = 4, n_step = 8; any m, n (partial tiles are computed whole and stored in part).
// Technique: the LHS chunks (8 columns x rows 0,1 | rows 2,3) are sorted by UZP1/UZP2 on
// 32-bit lanes into 8 registers a[g] = k-group g (4 columns) of rows 0..3, one row per lane;
// each weight register (8 columns of 2 weight rows) feeds 4 lane-indexed SDOTs, so an int32
// accumulator holds one output column for the 4 rows; the tile is transposed once at the store.
// Inner loop, per 32-block and 4x8 tile (1024 int8 MACs): 8 LDR Q of activations + 8 UZP,
// 16 LDR Q of weights, 64 SDOT (by element), 8 SCVTF, scales (LDR D + LDR Q, 3 FCVTL), 8 FMUL
// (by lane) + 8 FMLA. Counted in the clang-19 -O2 disassembly: 121 instructions per block and
// tile, 64 of them SDOT (8.5 MACs per instruction), no spills; 1024 MACs per 400 bytes loaded
// (272 of weights, 128 of activations). llvm-mca: 59 cycles per block on Neoverse N1.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_dotprod;

}  // namespace qmm
