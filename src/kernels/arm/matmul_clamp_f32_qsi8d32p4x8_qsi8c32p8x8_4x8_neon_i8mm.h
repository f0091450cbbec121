// Q8_0 GEMM for NEON I8MM: dst[m, n] = clamp(lhs · rhsᵀ) with int8 activations and int8
// weights, in 4x8 output tiles of 2x2 SMMLA blocks.
//   LHS: lhs_quant_pack_qsi8d32pscalef16_f32_neon, mr = 4, kr = 8, sr = 1 (per block: 4 f16 scales,
//        then 4 chunks of 8 columns x 4 rows: a 16-byte load is SMMLA's 2x8 LHS operand).
//   RHS: rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, nr = 8, kr = 8 (a 16-byte load of one chunk
//        and two rows is SMMLA's 2x8 RHS operand; shared with the Q8_0 DotProd GEMV/GEMM).
//   m_step = 4, n_step = 8; any m, n (partial tiles are computed whole and stored in part).
// Inner loop, per 32-block and 4x8 tile (1024 int8 MACs): 16 x 16-byte weight loads, 8 x 16-byte
// activation loads, 32 SMMLA (32 MACs each), 8 SCVTF, scale set-up (3 FCVTL, 2 ZIP, 4 DUP),
// 8 FMUL and 8 FMLA: 91 instructions per 1024 MACs in the clang-19 -O2 disassembly (11 MACs
// per instruction), no spills; 1024 MACs per 400 bytes loaded
// (272 of weights, 128 of activations).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_i8mm;

}  // namespace qmm
