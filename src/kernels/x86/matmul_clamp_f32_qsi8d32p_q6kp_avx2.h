// AVX2 kernels for Q6_K weights (vpmaddubsw), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avx2_maddubs   mr 4, nr 8, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avx2_maddubs   mr 1, nr 8, kr 4, sr 2
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (mr 4 / mr 1), one shared RHS:
//          rhs_pack_nxk_q6kp_q6k (ref/rhs_pack_nxk_kquants.h, 210 bytes per row and
//          super-block: the GGUF bytes, rearranged).
//
// Inner loop, per 32-block j of a super-block: each chunk vector (one 32-bit lane per column)
// is rebuilt to the 6-bit level u = q + 32 (0..63): the 4 low bits from the ql group
// (`and 0x0f` or `srl 4`), bits 4-5 from the qh group shifted into place (`and 0x30`).
// vpmaddubsw(u, a) sums pairs in int16; over each 16-weight sub-block (4 chunks) the zero
// point 32·Σa, also a vpmaddubsw per row (shared by the column panels), is subtracted, and the
// int16 lanes may wrap on the way: the final Σ(u − 32)·a over 8 products is within ±32512.
// vpmaddwd by the sub-block's int8 scale (sign-extended into both int16 halves of the lane:
// vpbroadcastq, vpshufb, vpsraw) gives int32, then to F32 and one FMA with s_a per sub-block;
// d is applied once per super-block. The 4 blocks of each 128-weight half are unrolled (shift
// counts are constants), and the step prefetches the next column group's super-block into L2
// one eighth per block (x86_qloops.h kPrefetchesInStep). Callgrind, AVX2: GEMV 0.40
// instructions per MAC (0.21 for Q4_0, whose weights are 0.69x the bytes), GEMM (m = 16) 0.25.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avx2_maddubsnear;  // the same bits, prefetching one super-block ahead in the panel (x86_qloops.h)

}  // namespace qmm
