// Q8_0 GEMM for NEON DotProd: dst[m, n] = clamp(lhs · rhsᵀ) with int8 activations and int8
// weights, in 4x8 output tiles.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32, mr = 4, kr = 8, sr = 1 (per block: 4 f16 scales,
//        then 4 chunks of 8 columns x 4 rows).
//   RHS: rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, nr = 8, kr = 8 (shared with the Q8_0 DotProd
//        GEMV and I8MM GEMM).
//   m_step = 4, n_step = 8; any m, n (partial tiles are computed whole and stored in part).
// Inner loop, per 32-block and 4x8 tile (1024 int8 MACs): 16 x 16-byte weight loads, 16 LD1R
// of 8-byte activation chunks (one per row and chunk, replicated so that a plain SDOT pairs
// them with 8 weights of two columns), 64 SDOT, 8 ADDP, 8 SCVTF, scale loads/converts, 8 FMUL
// (by lane) and 8 FMLA: 160 instructions per 1024 MACs in the clang-19 -O2 disassembly (6.4 MACs
// per instruction; address arithmetic for the LD1Rs is most of the rest), no spills; 1024 MACs per 400 bytes loaded
// (272 of weights, 128 of activations).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_dotprod;

}  // namespace qmm
