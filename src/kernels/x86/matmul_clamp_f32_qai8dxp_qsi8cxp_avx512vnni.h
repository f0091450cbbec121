// AVX-512 VNNI kernels for per-channel int8 weights (qc8) with per-row int8 activations: GEMM
// (8x16 tile, two panels per step) and GEMV (1x16, four panels per step), one zmm vpdpbusd
// per 4 columns of K, row and panel (kernels/x86/avx512_channel_tiles.h).
// Packers: lhs_quant_pack_qai8dxp_f32 (mr = 8 GEMM, 1 GEMV), rhs_pack_nxk_qsi8cxp_qsi8cx (nr = 16);
// kr = 4, sr = 1; m_step = mr, n_step = 16.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp8x4_qsi8cxp16x4_8x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi8cxp16x4_1x16_avx512vnni_dpbusd;

}  // namespace qmm
