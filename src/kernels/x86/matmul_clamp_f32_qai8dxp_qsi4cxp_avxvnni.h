// AVX-VNNI kernels for per-channel int4 weights (qc4) with per-row int8 activations
// (kernels/x86/avx2_channel_tiles.h): vpdpbusd ymm of the unsigned weights w + 8 (nibble ^ 8)
// and the signed activations; the epilogue subtracts 8·Σa.
// Packers: lhs_quant_pack_qai8dxp_f32_avx2 (mr = 4 GEMM, 1 GEMV), rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0
// (nr = 8); kr = 8, sr = 1; m_step = mr, n_step = 8: the AVX2 pair's packed RHS.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_4x8_avxvnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8_avxvnni_dpbusd;

}  // namespace qmm
