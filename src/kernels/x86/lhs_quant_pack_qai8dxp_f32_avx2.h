// lhs_quant_pack_qai8dxp_f32_avx2: the AVX2 twin of lhs_quant_pack_qai8dxp_f32 (per-row
// asymmetric int8, KleidiAI's layout and arithmetic; kernels/ref/lhs_quant_pack_qai8dxp_f32.h):
// the same bytes for every mr, kr, sr (the tests compare them through `reference`). Each row's
// min / max / finiteness and its quantization run 8 floats at a time: roundf as truncation
// plus ±1 where the fraction is >= 0.5 (exact), the clamp to [-128, 127] by saturating packs;
// 32 values at a time are then placed kr/sr bytes per chunk as the layout wants.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const LhsPacker lhs_quant_pack_qai8dxp_f32_avx2;

}  // namespace qmm
