// AVX2 kernels for IQ4_NL weights (vpshufb + vpmaddubsw), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x4_4x8_avx2_maddubs   mr 4, nr 8, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_iq4nlp8x4_1x8_avx2_maddubs   mr 1, nr 8, kr 4, sr 2
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (mr 4 / mr 1), one shared RHS:
//          rhs_pack_nxk_iq4nlp_iq4nl (ref/rhs_pack_nxk_kquants.h, 18 bytes per row and
//          32-block, as GGUF).
//
// Inner loop, per 32-block: each of the 4 chunk vectors (one 32-bit lane per column) gives two
// vectors of 4-bit indices (`and 0x0f`, `srl 4; and 0x0f`), looked up in the code book with
// vpshufb (x86_kblocks.h's iq4nl_values: signed int8, −127..113); then as the Q8_0 kernel,
// |w| · sign(a, w) with vpmaddubsw (a pair of products is at most 2·127·127, no saturation)
// and vpmaddwd by 1 into int32, and one F32 FMA with d·s_a per block. The GEMV does the same
// for 1 row and 4 column panels, prefetching the next 4 panels (x86_qloops.h).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x4_4x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp8x4_1x8_avx2_maddubs;

}  // namespace qmm
