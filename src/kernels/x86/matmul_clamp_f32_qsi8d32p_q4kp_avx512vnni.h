// avx512vnni kernels for Q4_K weights (vpdpbusd), GEMM and GEMV over ONE packed RHS.
//
//   GEMM matmul_clamp_f32_qsi8d32p8x4_q4kp16x4_8x16_avx512vnni_dpbusd   mr 8, nr 16, kr 4, sr 2
//   GEMV matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusd   mr 1, nr 16, kr 4, sr 2
//     and its twins of the same bits, tuner candidates (matmul/tune.h):
//     matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusdymm (over ymm)
//     matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusdl1 (the stream prefetched into L1)
//   m_step = mr, n_step = nr.
// Packers: lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 (mr 8 / mr 1), one shared RHS:
//          rhs_pack_nxk_q4kp_q4k at nr 16 (ref/rhs_pack_nxk_kquants.h, 148 bytes per row and
//          super-block, the GGUF 144 + 4).
// Inner loop: x86_qloops.h's VnniQ4K (vpdpbusd of the nibble levels straight into int32, two
// F32 FMAs per sub-block for d·sc and the dmin·m term) in its GEMM / GEMV loops.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p8x4_q4kp16x4_8x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusdymm;
extern const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusdl1;

}  // namespace qmm
