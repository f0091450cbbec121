// matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa: per-channel int4 (QC4) GEMM with
// SME2 SMOPA on KleidiAI's own layout for its kernel of this name (kr 4, sr 1: the name's "x8"
// is KleidiAI's spelling, its kai_get_kr returns 4), so a framework's buffers packed for
// KleidiAI's SME2 GEMM (what XNNPack and ExecuTorch call) run on qmm unchanged.
//
// Packers (mr nr kr sr = VL 4·VL 4 1): LHS lhs_quant_pack_qai8dxp_f32 (panel of VL rows, 4-K
// chunks of VL × 4 int8, then VL -zp, VL scales); RHS rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0
// (KleidiAI's ..._neon: a 4-K chunk is nr little-endian u16 of four sequential signed nibbles,
// then nr int32 row sums, nr F32 scales, nr F32 biases). m_step = VL, n_step = 4·VL. qmm's own
// QC4 GEMM (kr 8, sr 2) is listed first, so the driver never selects this one; it is for the
// microkernel API.
//
// Loop (kernels/arm/sme2_channel.h, policy Qc4Kai): ZA0..ZA3.S accumulate the whole of K; per
// 32 K: LD1B×4 ×2 (8 LHS chunks), 8 × { LD1B×2, LUTI4 ×2 (ZT0 = the signed int4 values: nibble
// i -> byte i), 4 SMOPA }, the chunk offsets in registers (no RDVL), two ADDVL pointer steps; the
// epilogue (multiply, then add the bias: KleidiAI's GEMM rule) is the other per-channel kernels'.
// Bit-identical to KleidiAI's kernel of this name (tests/arm/test_kleidiai_bits.cpp).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa;

}  // namespace qmm
