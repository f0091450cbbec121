// AVX-512 VNNI kernels for Q8_0 weights (zmm vpdpbusd), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p8x4_qau8c32p16x4_8x16_avx512vnni_dpbusd   mr 8, nr 16, kr 4, sr 1
//   GEMV matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusd   mr 1, nr 16, kr 4, sr 1
//   GEMV twins over the same packed RHS, the same bits (GemvTwinTest), chosen by the tuner:
//     matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusdymm (ymm, two 8-column halves per panel),
//     matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusdl1 (the stream prefetched into L1)
//   GEMM twin matmul_clamp_f32_qsi8d32p8x4_qau8c32p16x4_8x16_avx512vnni_dpbusdl1: its few-row path
//     (m <= 4) prefetched into L1 as the L1 GEMV's; the rows of 2-4 while that GEMV is the plan.
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, rhs_pack_nxk_qau8c32pscalef16_qsi8c32 with nr = 16.
//
// Inner loop, per 32-block: the int32 accumulator of each row starts at −128·Σa (the zero
// point of u = w + 128, from the LHS block sum); the block's 16 columns are 8 zmm of u8 (K chunk
// v, one 32-bit lane per column), each one vpdpbusd per row with the row's 4-byte chunk
// broadcast. Once per block: to F32 and one FMA with s_a·s_w. The GEMV does 1 row and 4 column
// panels at once (x86_qloops.h).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p8x4_qau8c32p16x4_8x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusdl1;
extern const Ukernel matmul_clamp_f32_qsi8d32p8x4_qau8c32p16x4_8x16_avx512vnni_dpbusdl1;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusdymm;

}  // namespace qmm
