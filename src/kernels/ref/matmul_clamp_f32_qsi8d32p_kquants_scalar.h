// Scalar reference kernels for Q4_K, Q5_K, Q6_K and IQ4_NL weights (the test oracle of every
// other kernel of these types, and the last resort on any CPU).
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_<rhs>8x4_4x8_scalar   mr 4, nr 8, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_<rhs>8x4_1x8_scalar   mr 1, nr 8, kr 4, sr 2
//   <rhs> = q4kp, q5kp, q6kp, iq4nlp; m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32p_f32 (int8 per 32-block, f16 scale), and the type's packer
// of kernels/ref/rhs_pack_nxk_kquants.h (layouts there).
//
// Per 32-block b of row i and column j: Σ over its scale groups g (32 elements; 16 for Q6_K)
// of (int32 Σ q_a·q_w) · scale_g, minus min_b · Σ q_a (Q4_K / Q5_K: dmin·m_b), times the LHS
// block scale, summed in F32 in block order. q_w is the weight's integer code: Q4_K/Q5_K the
// unsigned level, Q6_K level − 32, IQ4_NL the code-book value.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_scalar;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_scalar;
extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_q5kp8x4_4x8_scalar;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q5kp8x4_1x8_scalar;
extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_scalar;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_scalar;
extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x4_4x8_scalar;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp8x4_1x8_scalar;

}  // namespace qmm
