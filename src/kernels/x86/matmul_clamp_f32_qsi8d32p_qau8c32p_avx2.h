// AVX2 kernels for Q8_0 weights (vpmaddubsw with the sign trick), GEMM and GEMV over ONE
// packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_qau8c32p8x4_4x8_avx2_maddubs   mr 4, nr 8, kr 4, sr 1
//   GEMV matmul_clamp_f32_qsi8d32p1x4_qau8c32p8x4_1x8_avx2_maddubs   mr 1, nr 8, kr 4, sr 1
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h,
//          mr 4 / mr 1), one shared RHS:
//          rhs_pack_nxk_qau8c32pscalef16_qsi8c32 (x86/rhs_pack_nxk_qau8c32pscalef16_qsi8c32.h)
//
// Inner loop, per 32-block: 8 ymm of weights (K chunk v, one 32-bit lane per column), each
// turned back to s8 (u ^ 0x80) and |w| once, then per row vpmaddubsw(|w|, sign(a, w)) — exact,
// |w|·|a|·2 <= 128·127·2 fits int16 — vpmaddwd by 1 and vpaddd into an int32 sum. Once per
// block: to F32 and one FMA with s_a·s_w. (The LHS block sums are not needed: no zero point.)
// The GEMV does 1 row and 4 column panels at once (one broadcast of each activation chunk
// serves the 4).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_qau8c32p8x4_4x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p8x4_1x8_avx2_maddubs;

}  // namespace qmm
