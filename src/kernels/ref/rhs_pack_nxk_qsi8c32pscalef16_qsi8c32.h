// rhs_pack_nxk_qsi8c32pscalef16_qsi8c32: GGUF Q8_0 rows [n, k] -> nr-row panels.
//   int8 of (row r, column c) at (c/kr)·nr·kr + r·kr + c%kr (kr-byte K chunks, rows interleaved),
//   then the f16 d of (block b, row r) at index b·nr + r.  Panel bytes nr·(k/32)·34.
// Parameters: any nr >= 1, kr dividing 32; sr does not change this layout.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_qsi8c32pscalef16_qsi8c32;

}  // namespace qmm
