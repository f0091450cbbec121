// matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot: per-channel int4 (QC4) GEMV with SME2
// multi-vector SDOT on KleidiAI's own layout for its kernel of this name (kr 4, sr 1), so a
// framework's buffers packed for KleidiAI's kernel run on qmm unchanged.
//
// Packers (mr nr kr sr = 1 4·VL 4 1): LHS lhs_quant_pack_qai8dxp_f32 (one row: K int8 in order,
// -zp, scale); RHS rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0 (KleidiAI's ..._neon: a 4-K chunk is nr
// little-endian u16 of four sequential signed nibbles, then nr int32 row sums, nr F32 scales, nr
// F32 biases). m_step = 1, n_step = 4·VL. No qmm GEMM reads this buffer, so the driver never
// selects it; it is for the microkernel API.
//
// Loop (kernels/arm/sme2_channel.h, policy Qc4Kai): ZA.S[0, VGx4] accumulates the whole of K; per
// 32 K: LD1RQB ×2, 8 × { LD1B×2, LUTI4 ×2 (ZT0 = the signed int4 values: nibble i -> byte i),
// SDOT vgx4 lane }; the epilogue of the other per-channel kernels. Bit-identical to KleidiAI's
// kernel of this name (tests/arm/test_kleidiai_bits.cpp).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot;

}  // namespace qmm
