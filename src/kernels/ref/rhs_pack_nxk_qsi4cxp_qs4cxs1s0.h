// rhs_pack_nxk_qsi4cxp_qs4cxs1s0: per-channel int4 weights [n, k] -> nr-row panels, byte for
// byte KleidiAI's kai_rhs_pack_nxk_qsi4cxp_qs4cxs1s0 (lhs_zero_point 1), for QC4 rows
// (core/channels.h) or KleidiAI's arguments. K = round_up(k, 32); bl = kr/sr bytes per chunk.
//   Row r's K/2 bytes, in 32-column groups of 16 bytes: byte j holds column 32·(j/16) + j%16 in
//   its low nibble and column 32·(j/16) + j%16 + 16 in its high nibble, signed int4 (two's
//   complement; columns k..K-1 are 0); byte j of row r at (j/bl)·nr·bl + r·bl + j%bl.
//   Then the tail at nr·K/2: nr int32 16·Σ_c q, nr f32 scale/16, nr f32 biases (row r at index r).
//   Panel bytes nr·(K/2 + 12). Rows n.. of the last panel repeat row n - 1 (KleidiAI clamps
//   the source row index).
// Why ×16: the kernels multiply the nibble in the high half of a byte, 16·q (LSL #4 for the low
// nibble, AND 0xF0 for the high one), so Σ a·16q - 16·zp·Σq, scaled by s/16, is the product.
// Parameters the Arm kernels use (mr nr kr sr):
//   SME2 GEMM VL 4·VL 8 2 and GEMV 1 4·VL 8 2 (bl = 4: a chunk of VL rows is one SMOPA / SDOT
//   operand vector; its low nibbles are columns 4t..4t+3 of a group, its high ones 4t+16..4t+19);
//   NEON I8MM / DotProd GEMMs 4 4 16 2 and DotProd GEMV 1 4 16 2 (bl = 8: KleidiAI's 4x4x32 layout,
//   rows 0-1 and 2-3 of a chunk are one SMMLA / SDOT operand each).
#pragma once
#include <cstdint>

#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_qsi4cxp_qs4cxs1s0;

// KleidiAI's arguments: rows of (k + 1)/2 bytes (element 2i in the low nibble of byte i),
// rhs_zero_point 8 (unsigned nibbles, value = nibble - 8) or 0 (signed int4), scale[n], bias[n]
// or nullptr (zero). rhs_packed: packed_size bytes, zeroed by the caller.
void pack_nxk_qsi4cxp_qs4cxs1s0(size_t n, size_t k, size_t nr, size_t kr, size_t sr, const uint8_t* rhs, const float* bias,
                                const float* scale, int rhs_zero_point, void* rhs_packed);

}  // namespace qmm
