// AVX2 kernels for Q4_0 weights (vpmaddubsw), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_qau4c32p8x4_4x8_avx2_maddubs   mr 4, nr 8, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_qau4c32p8x4_1x8_avx2_maddubs   mr 1, nr 8, kr 4, sr 2
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h,
//          mr 4 / mr 1), one shared RHS:
//          rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0 (x86/rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0.h)
//
// Inner loop, per 32-block and row: the block's 8 columns are 4 ymm of nibbles; `and 0x0f`
// and `srl 4; and 0x0f` give K chunks v and v+4 as u8 (one 32-bit lane per column), each
// multiplied by the row's 4-byte chunk broadcast (s8) with vpmaddubsw and summed in int16
// starting from the LHS's −8·Σa lane pair (the zero point; int16 lanes may wrap on the way, the
// final value of each, Σ(u − 8)·a over 16 products, is within ±16256). Once per block: vpmaddwd
// by 1 to int32, to F32, and one FMA with s_a·s_w into the F32 accumulator. The GEMV does the
// same for 1 row and 4 column panels at once (one broadcast of each activation chunk serves
// the 4), prefetching the next 4 panels (x86_qloops.h).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_qau4c32p8x4_4x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau4c32p8x4_1x8_avx2_maddubs;

}  // namespace qmm
