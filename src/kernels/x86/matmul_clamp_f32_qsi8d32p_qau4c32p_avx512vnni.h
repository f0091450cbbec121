// AVX-512 VNNI kernels for Q4_0 weights (zmm vpdpbusd), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p8x4_qau4c32p16x4_8x16_avx512vnni_dpbusd   mr 8, nr 16, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_qau4c32p16x4_1x16_avx512vnni_dpbusd   mr 1, nr 16, kr 4, sr 2
//   GEMV twins over the same packed RHS, the same bits (GemvTwinTest), chosen by the tuner:
//     matmul_clamp_f32_qsi8d32p1x4_qau4c32p16x4_1x16_avx512vnni_dpbusdymm (ymm, two 8-column halves per panel),
//     matmul_clamp_f32_qsi8d32p1x4_qau4c32p16x4_1x16_avx512vnni_dpbusdl1 (the stream prefetched into L1)
//   GEMM twin matmul_clamp_f32_qsi8d32p8x4_qau4c32p16x4_8x16_avx512vnni_dpbusdl1: its few-row path
//     (m <= 4) prefetched into L1 as the L1 GEMV's; the rows of 2-4 while that GEMV is the plan.
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h;
//          AVX2, which every AVX-512 CPU has), rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0 with nr = 16.
//
// Inner loop, per 32-block: the int32 accumulator of each row starts at −8·Σa (the zero point,
// from the LHS block sum); the block's 16 columns are 4 zmm of nibbles, `and 0x0f` and
// `srl 4; and 0x0f` give K chunks v and v+4 as u8 (one 32-bit lane per column), and each is one
// vpdpbusd per row with the row's 4-byte chunk broadcast ({1to16}). Once per block: to F32 and
// one FMA with s_a·s_w. 8 rows: 64 vpdpbusd per 12 unpack instructions. The GEMV does 1 row and
// 4 column panels at once (x86_qloops.h). A GEMM call of m ≤ 4 rows (batched decode) runs 2 rows x
// 4 panels or 4 rows x 2 panels in the GEMV's column groups and weight prefetch (x86q::stream_rows):
// each weight block read once for all rows, each row the bits it gets in 8-row tiles.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p8x4_qau4c32p16x4_8x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau4c32p16x4_1x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau4c32p16x4_1x16_avx512vnni_dpbusdl1;
extern const Ukernel matmul_clamp_f32_qsi8d32p8x4_qau4c32p16x4_8x16_avx512vnni_dpbusdl1;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau4c32p16x4_1x16_avx512vnni_dpbusdymm;

}  // namespace qmm
