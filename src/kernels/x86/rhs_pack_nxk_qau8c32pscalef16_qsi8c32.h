// rhs_pack_nxk_qau8c32pscalef16_qsi8c32: Q8_0 rows [n, k] -> the x86 kernels' packed RHS
// (scalar; runs once at load). Weights are stored unsigned, u = w + 128 (zero point 128:
// "qau8"), the u8 operand of vpdpbusd; the VNNI kernels subtract 128·Σa per block with the
// LHS block sums, the AVX2 kernels flip the bit back (u ^ 0x80 = w) for their sign trick.
//
// Layout, one panel of nr rows (nr a multiple of 8; kr = 4, sr = 1), block-major:
//   block b starts at byte b·nr·34 and holds
//     [0, 32·nr)       for v in 0..7, row r, i in 0..3: byte v·4·nr + 4·r + i is
//                      w[4v + i] + 128 of row r (K chunk v, one 32-bit lane per row)
//     [32·nr, 34·nr)   f16 d of row r at 32·nr + 2·r
//   panel bytes nr·(k/32)·34 (the GGUF size).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_qau8c32pscalef16_qsi8c32;

}  // namespace qmm
