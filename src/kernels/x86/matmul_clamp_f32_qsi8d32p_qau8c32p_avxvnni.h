// AVX-VNNI kernels for Q8_0 weights (ymm {vex} vpdpbusd), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_qau8c32p8x4_4x8_avxvnni_dpbusd   mr 4, nr 8, kr 4, sr 1
//   GEMV matmul_clamp_f32_qsi8d32p1x4_qau8c32p8x4_1x8_avxvnni_dpbusd   mr 1, nr 8, kr 4, sr 1
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, rhs_pack_nxk_qau8c32pscalef16_qsi8c32 with nr = 8 (the AVX2 kernels' RHS).
//
// Inner loop, per 32-block: the int32 accumulator of each row starts at −128·Σa (the zero
// point of u = w + 128, from the LHS block sum); the block's 8 columns are 8 ymm of u8 (K chunk
// v, one 32-bit lane per column), each one vpdpbusd per row with the row's 4-byte chunk
// broadcast. Once per block: to F32 and one FMA with s_a·s_w. The GEMV does 1 row and 4 column
// panels at once (x86_qloops.h).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_qau8c32p8x4_4x8_avxvnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p8x4_1x8_avxvnni_dpbusd;

}  // namespace qmm
