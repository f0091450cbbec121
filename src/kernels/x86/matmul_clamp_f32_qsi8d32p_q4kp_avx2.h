// AVX2 kernels for Q4_K weights (vpmaddubsw), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avx2_maddubs   mr 4, nr 8, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubs   mr 1, nr 8, kr 4, sr 2
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h,
//          mr 4 / mr 1), one shared RHS: rhs_pack_nxk_q4kp_q4k (ref/rhs_pack_nxk_kquants.h,
//          148 bytes per row and super-block, the GGUF 144 + 4).
//
// Inner loop, per sub-block j (32 weights) of a super-block: the 8 chunk vectors of its
// 32-byte group (one 32-bit lane per column) give its 4-bit levels q (`and 0x0f`, or
// `srl 4; and 0x0f` for odd j), each multiplied by the row's 4-byte activation chunk
// (broadcast) with vpmaddubsw and summed in int16 (16 products of q <= 15, |a| <= 127: no
// overflow); vpmaddwd by 1 to int32, to F32, one FMA with (d·sc_j)·s_a. The min term
// −dmin·m_j·Σa·s_a is one more FMA: (dmin/8·m_j) per column times (−8·Σa)·s_a per row (the
// LHS's int16 sums). sc_j and m_j are bytes in the packed RHS (one 8-byte load each per
// column panel, widened to F32 and multiplied by d / dmin once per row tile). The GEMV does
// the same for 1 row and 4 column panels, prefetching the next 4 panels (x86_qloops.h).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubs;

}  // namespace qmm
