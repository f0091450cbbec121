// AVX-512 VNNI kernels for per-channel int4 weights (qc4) with per-row int8 activations, on the
// shared tile loop of the ymm kernels (kernels/x86/avx2_channel_tiles.h) with 16-row panels:
// vpdpbusd of the unsigned weights w + 8 (nibble ^ 8) and the signed activations (one
// vpbroadcastq per LHS row and step, no per-row XOR), the epilogue subtracting 8·Σa. The
// GEMM interleaves the nibbles back into K order in-lane (vpunpck{l,h}bw, no cross-lane
// permutes); the GEMV multiplies the nibble planes by the LHS row's even / odd bytes.
// Packers: lhs_quant_pack_qai8dxp_f32_avx2 (mr = 8 GEMM, 1 GEMV), rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0
// (nr = 16); kr = 8, sr = 1; m_step = mr, n_step = 16.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp8x8_qsi4cxp16x8_8x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi4cxp16x8_1x16_avx512vnni_dpbusd;

}  // namespace qmm
