// AVX2 kernels for per-channel int4 weights (qc4) with per-row int8 activations
// (kernels/x86/avx2_channel_tiles.h). The weights are the unsigned vpmaddubsw operand: nibble
// ^ 8 = w + 8 in 0..15, the activations the signed one, so no pair sum can saturate (|15·128·2|)
// and two K steps add in int16 before vpmaddwd; the epilogue subtracts 8·Σa (a: the LHS row).
// Packers: lhs_quant_pack_qai8dxp_f32_avx2 (mr = 4 GEMM, 1 GEMV), rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0
// (nr = 8); kr = 8, sr = 1; m_step = mr, n_step = 8. The AVX-VNNI pair reads the same RHS.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_4x8_avx2_maddubs;
extern const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8_avx2_maddubs;

}  // namespace qmm
