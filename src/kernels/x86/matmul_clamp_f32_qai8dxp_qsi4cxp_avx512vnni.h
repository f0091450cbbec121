// AVX-512 VNNI kernels for per-channel int4 weights (qc4) with per-row int8 activations: the
// tiles of the qc8 kernels (kernels/x86/avx512_channel_tiles.h), each 32-byte weight load
// unpacked to 64 sign-extended int8 (nibble split, byte interleave, (n ^ 8) - 8).
// Packers: lhs_quant_pack_qai8dxp_f32 (mr = 8 GEMM, 1 GEMV), rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0 (nr = 16);
// kr = 4, sr = 1; m_step = mr, n_step = 16.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp8x4_qsi4cxp16x4_8x16_avx512vnni_dpbusd;
extern const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi4cxp16x4_1x16_avx512vnni_dpbusd;

}  // namespace qmm
