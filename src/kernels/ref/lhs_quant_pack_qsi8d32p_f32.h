// lhs_quant_pack_qsi8d32p_f32: F32 activations -> int8 per 32-block + f16 scale, mr-row panels
// (docs/design.md §5, byte-identical to KleidiAI's kai_lhs_quant_pack_qsi8d32p_f32_neon).
//   panel of mr rows: int8 of (row r, column c) at (c/kr)·mr·kr + r·kr + c%kr,
//   then the f16 scale of (block b, row r) at index b·mr + r;  panel bytes mr·(k/32)·34.
// Parameters: any mr >= 1, kr in {1, 2, 4, 8, 16, 32}; sr does not change this layout.
#pragma once
#include <cstdint>

#include "kernels/ukernel.h"

namespace qmm {

// One 32-block: scale = amax/127 (F32), q = (int8) roundf(x · (1/scale)); returns the scale.
// A block holding NaN or ±Inf, or whose scale rounds to Inf in binary16, returns NaN with all
// q = 0 (the NaN policy, kernels/ukernel.h): every output of its row becomes NaN.
float quantize_block_qsi8d32(const float* x, int8_t* q);

extern const LhsPacker lhs_quant_pack_qsi8d32p_f32;

}  // namespace qmm
