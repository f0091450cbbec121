// AVX-512 VNNI kernels for IQ4_NL weights (vpdpbusd), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p8x4_iq4nlp16x4_8x16_avx512vnni_dpbusd   mr 8, nr 16, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusd   mr 1, nr 16, kr 4, sr 2
//   GEMV twins over the same packed RHS, the same bits (GemvTwinTest), chosen by the tuner:
//     matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusdymm (ymm, two 8-column halves per panel),
//     matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusdl1 (the stream prefetched into L1)
//   GEMM twin matmul_clamp_f32_qsi8d32p8x4_iq4nlp16x4_8x16_avx512vnni_dpbusdl1: its few-row path
//     (m <= 4) prefetched into L1 as the L1 GEMV's; the rows of 2-4 while that GEMV is the plan.
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (mr 8 / mr 1), one shared RHS:
//          rhs_pack_nxk_iq4nlp_iq4nl at nr 16 (ref/rhs_pack_nxk_kquants.h, 18 bytes per row and 32-block, as GGUF).
// Inner loop: x86_kblocks.h's VnniIq4nl (vpshufb of the indices into the code book + 128, so
// vpdpbusd takes the weights as its unsigned operand and the sums start at the LHS's −128·Σa;
// one F32 FMA per 32-block) in x86_qloops.h's GEMM / GEMV loops.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p8x4_iq4nlp16x4_8x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusdl1;
extern const Ukernel matmul_clamp_f32_qsi8d32p8x4_iq4nlp16x4_8x16_avx512vnni_dpbusdl1;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusdymm;

}  // namespace qmm
