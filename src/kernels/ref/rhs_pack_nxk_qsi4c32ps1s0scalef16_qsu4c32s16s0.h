// rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0: GGUF Q4_0 rows [n, k] -> nr-row panels
// (docs/design.md §5; byte-identical to KleidiAI's kai_rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0_neon
// with lhs_zero_point 1, rhs_zero_point 8, for the rows it writes).
//   For block b, quad q (0..7) and row r: the little-endian u16 at u16-index (b·8 + q)·nr + r
//   holds elements b·32 + 4q + i (i = 0..3) in bits [4i+3 : 4i], unsigned (zero point 8);
//   then the f16 d of (block b, row r) at index b·nr + r.  Panel bytes nr·(k/32)·18.
// Parameters: any nr >= 1, kr = 4, sr = 2 (the layout is defined for those only).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0;

}  // namespace qmm
