// lhs_pack_f16pmrx2_f32: F32 activations -> F16 pairs, the LHS of the F16-activation Q4_0 GEMMs
// (matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa, whose name and layout are
// KleidiAI's, and its scalar reference matmul_clamp_f32_f16p4x2_qsi4c32p8x4s2_4x8_scalar).
// Byte-identical to KleidiAI's kai_lhs_pack_f16pmrx2_f32_neon for the rows it writes
// (tests/arm/test_kleidiai_bits.cpp compares them where the Arm build links KleidiAI).
//
// Layout, one panel of mr rows (kr / sr = 2 values of a row together; KleidiAI's kernel has
// kr 4, sr 2): the f16 of (r, c) at u16 index (c/2)·mr·2 + r·2 + c%2, so a panel is k/2 vectors
// of mr F16 pairs, one FMOPA (widening, 2 K per instruction) operand each. Panel bytes mr·k·2;
// k a multiple of 32 (the Q4_0 block). Rows beyond m in the last panel are zero (KleidiAI
// leaves them unwritten; neither kernel stores their outputs).
//
// Rounding: to nearest even, as the FCVT KleidiAI's packer uses (fp32_to_fp16). The NaN policy
// (kernels/ukernel.h): a NaN, ±Inf or a finite value that F16 cannot hold (|x| ≥ 65520, which
// FCVT rounds to ±Inf) becomes NaN, so its whole output row is NaN, as the quantizing packers'
// NaN block scale makes it (KleidiAI's packer writes ±Inf there; the F16 path has no other
// answer for an activation beyond the F16 range). No scales: the values themselves.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const LhsPacker lhs_pack_f16pmrx2_f32;

}  // namespace qmm
