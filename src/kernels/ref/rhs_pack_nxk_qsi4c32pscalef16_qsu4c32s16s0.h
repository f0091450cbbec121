// rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0: GGUF Q4_0 rows [n, k] -> nr-row panels with each
// block's scales in front of its data, nibbles made signed. This is the RHS of the NEON
// DotProd/I8MM Q4_0 kernels, byte-identical to KleidiAI's
// kai_rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0 (bl = 32, rhs_zero_point 8, lhs_zero_point 1)
// for the rows it writes (KleidiAI repeats row n-1 into the padding rows; qmm leaves them zero).
//   panel of nr rows = k/32 blocks of nr·18 bytes; block b:
//     nr f16 scales d (row r at index r), then the 16 GGUF bytes qs of every row in segments of
//     kr/2 bytes, rows interleaved: byte i of segment s of row r at nr·2 + (s·nr + r)·(kr/2) + i
//     holds qs[s·kr/2 + i] XOR 0x88, i.e. low nibble = element s·kr/2 + i, high nibble =
//     element 16 + s·kr/2 + i, each as a signed int4 (GGUF nibble - 8).
//   With kr = 16 (8-byte segments), a 16-byte load of segment s, rows r and r+1, gives after
//   `shl #4` the int8 (x16) of elements 8s..8s+7 of both rows, after `and #0xf0` those of
//   16+8s..16+8s+7: exactly the 2x8 operand of SMMLA, or 4 SDOT groups.
//   Accessors: layout::qsi4c32pscalef16_* (kernels/ref/layouts.h).
// Parameters: any nr >= 1; kr even and dividing 32; sr = 2.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0;

}  // namespace qmm
