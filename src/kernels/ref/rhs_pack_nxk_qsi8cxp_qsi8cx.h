// rhs_pack_nxk_qsi8cxp_qsi8cx: per-channel int8 weights (QC8 rows, core/channels.h) [n, k] -> nr-row panels,
// KleidiAI's panel structure (data, then per-row sums, scales, biases). K = round_up(k, 32),
// columns k..K-1 zero.
//   int8 of (row r, column c) at e = (c/kr)·nr·kr + r·kr + c%kr (kr-byte K chunks, rows interleaved);
//   then the tail at nr·K: nr int32 row sums Σ_c q, nr f32 scales, nr f32 biases (row r at index r).
//   Panel bytes nr·(K + 12).
// The row sums let the kernel fold the LHS zero point: Σ (a - zp)·q = Σ a·q - zp·Σ q.
// Parameters: any nr >= 1, kr dividing 32; sr does not change this layout.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_qsi8cxp_qsi8cx;

}  // namespace qmm
