// AVX-VNNI kernels for Q6_K weights (vpdpbusd), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avxvnni_dpbusd   mr 4, nr 8, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avxvnni_dpbusd   mr 1, nr 8, kr 4, sr 2
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (mr 4 / mr 1), one shared RHS:
//          rhs_pack_nxk_q6kp_q6k at nr 8 (ref/rhs_pack_nxk_kquants.h, 210 bytes per row and super-block: the GGUF bytes, rearranged).
// Inner loop: x86_kblocks.h's VnniQ6K (6-bit levels q + 32 rebuilt from ql / qh, vpdpbusd
// into int32 per 16-weight sub-block minus the zero point 32·Σa, times the int8 scale with
// vpmulld, one F32 FMA with d·s_a per 32-block) in x86_qloops.h's GEMM / GEMV loops.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avxvnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avxvnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avxvnni_dpbusdnear;  // the same bits, prefetching one super-block ahead in the panel (x86_qloops.h)

}  // namespace qmm
