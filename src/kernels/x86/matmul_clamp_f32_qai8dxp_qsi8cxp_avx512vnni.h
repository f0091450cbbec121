// AVX-512 VNNI kernels for per-channel int8 weights (qc8) with per-row int8 activations: GEMM
// (4x16 tile) and GEMV (1x16), one zmm vpdpbusd per 4 columns of K and row. The activations are
// signed: each broadcast is made unsigned by XOR 0x80 (a + 128), and the epilogue folds
// -128·Σw together with the zero point: isum = Σ (a+128)·w + (-zp - 128)·Σw. int32 sums: exact
// while k < 2^16 (the reference sums in int64). Epilogue as the reference (scalar_channel.h):
// float(isum) · (s_a · s_w) + bias, unfused, clamped NaN-propagating.
// Packers: lhs_quant_pack_qai8dxp_f32 (mr = 4 GEMM, 1 GEMV), rhs_pack_nxk_qsi8cxp_qsi8cx (nr = 16);
// kr = 4, sr = 1; m_step = mr, n_step = 16.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp4x4_qsi8cxp16x4_4x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi8cxp16x4_1x16_avx512vnni_dpbusd;

}  // namespace qmm
