// AVX2 kernels for Q4_K weights (vpmaddubsw), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avx2_maddubs   mr 4, nr 8, kr 4, sr 2 (4 x 16 tiles)
//   GEMV matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubs   mr 1, nr 8, kr 4, sr 2
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h,
//          mr 4 / mr 1), one shared RHS: rhs_pack_nxk_q4kp_q4k (ref/rhs_pack_nxk_kquants.h,
//          148 bytes per row and super-block, the GGUF 144 + 4).
//
// Inner loop, per sub-block j (32 weights) of a super-block, one pass per nibble: the 8 chunk
// vectors of its 32-byte group (one 32-bit lane per column) give its 4-bit levels q (`and
// 0x0f`, or `srl 4; and 0x0f` for odd j), each multiplied by the row's 4-byte activation chunk
// (broadcast) with vpmaddubsw and summed in int16 (8 products of q <= 15, |a| <= 127: no
// overflow). Then vpmaddwd by sc_j (the integer scale, a vpshufb of the packed bytes) gives
// int32, to F32, one FMA with s_a; the min term m_j·(−8Σa)·s_a (the LHS's int16 sums) is one
// more FMA. d and dmin/8 multiply once per super-block. Both nibbles in one pass needed 2·C·R
// int16 accumulators and spilled in the GEMV. The GEMM takes 4 rows x 2 panels, the GEMV 1 row
// x 4 panels, prefetching the next 4 panels (x86_qloops.h). Callgrind (n 256, k 1024): GEMV
// 0.29 instructions per MAC (Q4_0 0.21), GEMM m = 16 0.20 (Q4_0 0.16).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubsnear;  // the same bits, prefetching one super-block ahead in the panel (x86_qloops.h)

}  // namespace qmm
