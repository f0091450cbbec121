// matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa: Q4_0 GEMM with F16 activations and
// the widening F16 FMOPA (2 K per instruction into F32 sums in ZA). KleidiAI's kernel of this
// name reads the same bytes (its packers kai_lhs_pack_f16pmrx2_f32_neon and
// kai_rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0_neon; llama.cpp runs it for Q4_0 prefill on
// SME2) and gives the same bits (tests/arm/test_kleidiai_bits.cpp): the same F16 weights
// (LUTI4 of the nibble, FMUL by the block's f16 scale), the same FMOPA order along k.
//
// Packers:
//   LHS lhs_pack_f16pmrx2_f32_neon                      mr = VL, F16 pairs (kr / sr = 2)
//   RHS rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0  nr = 4·VL, kr = 4, sr = 2 (the int8 Q4_0
//       SME2 GEMM's and GEMV's packed weights: one packing serves this GEMM and the SDOT GEMV)
// VL = SVL/32; m_step = mr, n_step = nr; k a multiple of 32. Correct at any SVL 128..2048.
//
// Output tile 1VL × 4VL in ZA0.S..ZA3.S over all of k (no per-block epilogue: the block scale
// is folded into the F16 weights). One row tile (m ≤ VL): per 32-block LD1H ×2 the 4·VL
// scales, 2 ZIP ×2 (each scale to both F16 lanes of its column); LD1B ×4 ×4 the 16 LHS pair
// vectors (VL rows × 2 K); per quad (4 K): LD2B the nr u16 (low bytes: K 0-1, high bytes: K 2-3
// of every column), 2 LUTI4 {4 × .H} from ZT0 (F16 −8..7 by the unsigned nibble) and 2 × (4
// FMUL by the scales, 4 FMOPA): 20 instructions per 4 K where KleidiAI's loop has 25 (it loads
// the LHS one vector and recomputes its RHS offset per half quad). Several row tiles (m > VL):
// per panel and slice of k the F16 weights are computed that way once into 32 KiB on the stack
// (no allocation; whole blocks, 32 at SVL 128, 8 at 512) and every row tile reads them back:
// per 4 K LD1B ×4 ×2 + 8 FMOPA + half an LHS load, ~11 instructions; between slices a tile's F32
// sums wait in dst (exact), so both paths give the same bits. After k each row of the tile is
// clamped (FMAX + FMIN, sme2_clamp.h) and stored.
//
// Numerics: activations rounded to F16 (|x| ≥ 65520 and non-finite ones become NaN, the
// packer's rule), weights d·(q − 8) rounded to F16 (|d| above 8188 overflows to ±Inf, as in
// KleidiAI's kernel), products exact, sums in F32. The scalar twin
// matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar is its Ukernel::reference.
//
// Instructions, 16 × 64 × 1024 at SVL 512 (docs/arm.md): see the table there.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa;

}  // namespace qmm
