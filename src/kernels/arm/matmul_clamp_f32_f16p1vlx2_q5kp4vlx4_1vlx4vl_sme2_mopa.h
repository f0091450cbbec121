// matmul_clamp_f32_f16p1vlx2_q5kp4vlx4_1vlx4vl_sme2_mopa: Q5_K GEMM with F16 activations and the
// widening F16 FMOPA (2 K per instruction into F32 sums in ZA), the Q5_K sibling of
// matmul_clamp_f32_f16p1vlx2_q4kp4vlx4_1vlx4vl_sme2_mopa (qmm's own; KleidiAI has no Q5_K
// kernel).
//
// Packers:
//   LHS lhs_pack_f16pmrx2_f32_neon  mr = VL, F16 pairs (kr / sr = 2; the Q4_0 F16 GEMM's LHS)
//   RHS rhs_pack_nxk_q5kp_q5k       nr = 4·VL, kr = 4, sr = 2 (the int8 Q5_K SME2 GEMM's and
//       GEMV's packed weights, unchanged: layout in kernels/ref/rhs_pack_nxk_kquants.h)
// VL = SVL/32; m_step = mr, n_step = nr; k a multiple of 256. Correct at any SVL 128..2048.
//
// Per panel and slice of k (whole 64-K groups: 16 at SVL 128, 4 at 512, 1 at 2048) the F16
// weights are computed once into 32 KiB on the stack and every row tile reads them back
// (sme2_f16_panels.h: per 32 K and tile 4 LHS + 16 weight LD1B ×4, 64 FMOPA). Dequantization,
// one sub-block (32 K) at a time: its factors f16(d·sc) and −f16(dmin·m) per column (as the F16
// Q4_K GEMM's); per 4-byte chunk (4 K of all 4·VL columns) 2 LD2H of qs and 2 of qh (the chunk's
// K pairs of 2·VL columns each), 2-3 byte ops per vector for the 5-bit q (SLI / SRI, AND, LSL /
// LSR), ZIP with 0x64 (F16 1024 + q), 8 FSUB of 1024 (exact), 8 FMAD and 2 ST1B ×4. Between
// slices a tile's F32 sums wait in dst unclamped (exact), so the bits do not depend on m or the
// SVL's slicing. After k each row is clamped (FMAX + FMIN) and stored.
//
// Numerics: activations rounded to F16 (|x| ≥ 65520 and non-finite ones become NaN: the
// packer's rule; the int8 Q5_K GEMM is the wide-range fallback, KernelPair::wide); per
// sub-block f16(d·sc) and f16(dmin·m), then each weight f16(q·f16(d·sc) − f16(dmin·m)) with one
// rounding (beyond 65504: ±Inf, |d| above ~33 in a GGUF file); products exact, sums in F32 in k
// order. The scalar twin matmul_clamp_f32_f16p4x2_q5kp8x4_4x8_scalar is its Ukernel::reference.
//
// Instructions, 64 × 256 × 512 at SVL 512 / 256 / 128: docs/arm.md.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f16p1vlx2_q5kp4vlx4_1vlx4vl_sme2_mopa;

}  // namespace qmm
