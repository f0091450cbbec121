// AVX2 kernels for Q5_K weights (vpmaddubsw), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_q5kp8x4_4x8_avx2_maddubs   mr 4, nr 8, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_q5kp8x4_1x8_avx2_maddubs   mr 1, nr 8, kr 4, sr 2
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (mr 4 / mr 1), one shared RHS:
//          rhs_pack_nxk_q5kp_q5k (ref/rhs_pack_nxk_kquants.h, 180 bytes per row and
//          super-block, the GGUF 176 + 4).
//
// Inner loop: x86_kblocks.h's Q5K over avx2::Ymm, the same code as the VNNI kernels': per
// sub-block j, the 5-bit levels q (0..31: the qs nibbles, bit 4 from the qh chunk) times the
// row's 4-byte activation chunk with vpmaddubsw (a pair of products is at most 2·31·127, no
// saturation) and vpmaddwd by 1 into int32; then one FMA with (d·sc_j)·s_a and one for the
// min term (dmin/8·m_j)·(−8·Σa)·s_a, as the Q4_K kernels. The GEMV does the same for 1 row
// and 4 column panels, prefetching the next 4 panels (x86_qloops.h).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_q5kp8x4_4x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q5kp8x4_1x8_avx2_maddubs;

}  // namespace qmm
