// rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0: per-channel int4 weights [n, k] -> nr-row panels, byte for
// byte KleidiAI's kai_rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0_neon (any nr, kr; sr unused), for
// QC4 rows (core/channels.h) or KleidiAI's arguments. K = round_up(k, 32), columns k..K-1 zero.
//   element (row r, column c) at e = (c/kr)·nr·kr + r·kr + c%kr, in byte e/2: low nibble for even
//   e, high for odd (sequential nibbles, "s1s0"), signed int4 (two's complement);
//   then the tail at nr·K/2: nr int32 row sums Σ_c q, nr f32 scales, nr f32 biases (row r at index r).
//   Panel bytes nr·(K/2 + 12). Rows n.. of the last panel are zero (data, sums, scales, biases).
// The row sums let the kernel fold the LHS zero point: Σ (a - zp)·q = Σ a·q - zp·Σ q.
// Used by the scalar (nr = 8, kr = 4) and x86 (nr = 16, kr = 4) QC4 kernels: a kr-value chunk
// is kr/2 consecutive bytes of one row.
#pragma once
#include <cstdint>

#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0;

// KleidiAI's arguments: rows of (k + 1)/2 bytes (element 2i in the low nibble of byte i),
// rhs_zero_point 8 (unsigned nibbles, value = nibble - 8) or 0 (signed int4), scale[n], bias[n]
// or nullptr (zero). rhs_packed: packed_size bytes, zeroed by the caller.
void pack_nxk_qsi4cxps1s0_qsu4cxs1s0(size_t n, size_t k, size_t nr, size_t kr, const uint8_t* rhs, const float* bias,
                                     const float* scale, int rhs_zero_point, void* rhs_packed);

}  // namespace qmm
