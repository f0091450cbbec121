// rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0: Q4_0 rows [n, k] -> the x86 kernels' packed
// RHS (scalar; runs once at load). Weights stay unsigned (u = w + 8, the GGUF nibble, zero
// point 8: "qau4") so they are the u8 operand of vpmaddubsw / vpdpbusd directly; the
// kernels subtract 8·Σa per block with the LHS block sums.
//
// Layout, one panel of nr rows (nr a multiple of 8; kr = 4, sr = 2), block-major:
//   block b starts at byte b·nr·18 and holds
//     [0, 16·nr)       for v in 0..3, row r, i in 0..3: byte v·4·nr + 4·r + i is the GGUF
//                      byte qs[4v + i] of row r: low nibble = element 4v + i (K chunk v),
//                      high nibble = element 16 + 4v + i (K chunk v + 4)
//     [16·nr, 18·nr)   f16 d of row r at 16·nr + 2·r
//   panel bytes nr·(k/32)·18 (the GGUF size: nothing is added).
// So a 4·nr-byte vector v holds, one 32-bit lane per row, the 4-element chunks v (low
// nibbles) and v + 4 (high nibbles): nr = 8 fills a ymm, nr = 16 a zmm.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0;

}  // namespace qmm
