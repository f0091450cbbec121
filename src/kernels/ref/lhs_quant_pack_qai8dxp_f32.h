// lhs_quant_pack_qai8dxp_f32: F32 activations -> per-row asymmetric int8 (one f32 scale and one
// int32 zero point per row), mr-row panels in KleidiAI's kai_lhs_quant_pack_qai8dxp_f32 layout:
//   K = round_up(k, 32), columns k..K-1 zero;
//   int8 of (row r, column c) at (c/kc)·mr·kc + r·kc + c%kc with kc = kr/sr (rows interleaved);
//   at mr·K: the mr int32 negated zero points (-zp of row r at index r);
//   at mr·(K + 4): the mr f32 scales (the dequantization step: x ≈ (q - zp)·scale).
//   Panel bytes mr·(K + 8).
// Quantization: [min, max] of the row widened to hold 0, scale = (max - min)/255, the zero point
// nudged to an integer in [-128, 127], q = clamp(round(x/scale) + zp, -128, 127).
// NaN policy (kernels/ukernel.h): a row holding NaN or ±Inf (or whose range overflows) gets a
// NaN scale, zero point 0 and all q = 0, so its every output is NaN.
// Parameters: any mr >= 1, kr/sr dividing 32.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const LhsPacker lhs_quant_pack_qai8dxp_f32;

}  // namespace qmm
