// AVX2 kernels for per-channel int8 weights (qc8) with per-row int8 activations
// (kernels/x86/avx2_channel_tiles.h). Both operands are signed and may be -128, which no
// vpmaddubsw form multiplies without saturating or wrapping, so the values are sign-extended
// to int16 (vpmovsxbw) and multiplied with vpmaddwd: exact for every input.
// Packers: lhs_quant_pack_qai8dxp_f32_avx2 (mr = 2 GEMM, 1 GEMV), rhs_pack_nxk_qsi8cxp_qsi8cx
// (nr = 8); kr = 8, sr = 1; m_step = mr, n_step = 8. The AVX-VNNI pair reads the same RHS.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp2x8_qsi8cxp8x8_2x8_avx2_maddwd;
extern const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi8cxp8x8_1x8_avx2_maddwd;

}  // namespace qmm
