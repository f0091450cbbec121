// lhs_quant_pack_qai8dxp_f32: F32 activations -> per-row asymmetric int8 (one f32 scale and one
// int32 zero point per row), mr-row panels, byte for byte KleidiAI's kai_lhs_quant_pack_qai8dxp_f32
// for the rows it writes (any mr, kr, sr with kc = kr/sr dividing 32):
//   K = round_up(k, 32); columns k..K-1 hold the quantized x[k-1] (KleidiAI's padding);
//   int8 of (row r, column c) at (c/kc)·mr·kc + r·kc + c%kc (rows interleaved in kc-byte chunks);
//   at mr·K: the mr int32 negated zero points (-zp of row r at index r);
//   at mr·(K + 4): the mr f32 scales (the dequantization step: x ≈ (q - zp)·scale).
//   Panel bytes mr·(K + 8). Rows m.. of the last panel are zero (KleidiAI leaves them unwritten).
// Quantization (KleidiAI's operations): [min, max] of the row widened to hold 0, mul = 255/(max -
// min) (1 when max == min), stored scale 1/mul; zero point -128 - min·mul or 127 - max·mul,
// whichever errs less, clamped to [-128, 127] and rounded half to even; q = clamp(roundf(x·mul) +
// zp, -128, 127) (half away from zero). An all-zero row gets scale 1, zero point 127, q = 127.
// NaN policy (kernels/ukernel.h): a row holding NaN or ±Inf (or whose range overflows) gets a
// NaN scale, zero point 0 and all q = 0, so its every output is NaN (KleidiAI has no policy).
// SME2 kernels: mr = VL (GEMM) or 1 (GEMV), kr = 8, sr = 2 (QC4) or kr = 4, sr = 1 (QC8): kc = 4.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const LhsPacker lhs_quant_pack_qai8dxp_f32;

// One row's quantization from its min `lo`, max `hi` and whether all its values are finite
// (shared with the SIMD twins, which find those faster): q = roundf(x·mul) + zero_point.
struct Qai8dxpRowQuant {
  float mul;    // quantizing multiplier; 0 for a poisoned row (then every q is 0)
  float scale;  // stored dequantization step, NaN for a poisoned row
  int32_t zero_point;
};
Qai8dxpRowQuant qai8dxp_row_quant(float lo, float hi, bool finite);

// The packed size / panel offset of m rows (the LhsPacker getters, shared with the SIMD twins).
size_t qai8dxp_packed_size(size_t m, size_t k, size_t mr, size_t kr, size_t sr);
size_t qai8dxp_packed_offset(size_t m_idx, size_t k, size_t mr, size_t kr, size_t sr);

}  // namespace qmm
