// rhs_pack_nxk_qsi8cxp_qsi8cx: per-channel int8 weights (QC8 rows, core/channels.h) [n, k] -> nr-row
// panels, byte for byte KleidiAI's kai_rhs_pack_nxk_qsi8cxp_qsi8cx_neon (lhs_zero_point 1, sr = 1).
// K = round_up(k, 32), columns k..K-1 zero.
//   int8 of (row r, column c) at e = (c/kr)·nr·kr + r·kr + c%kr (kr-byte K chunks, rows interleaved);
//   then the tail at nr·K: nr int32 row sums Σ_c q, nr f32 scales, nr f32 biases (row r at index r).
//   Panel bytes nr·(K + 12). Rows n.. of the last panel repeat row n - 1 (KleidiAI clamps the
//   source row index).
// The row sums let the kernel fold the LHS zero point: Σ (a - zp)·q = Σ a·q - zp·Σ q.
// Parameters: any nr >= 1, kr dividing 32; sr does not change this layout. The SME2 kernels use
// (mr nr kr sr) GEMM VL 4·VL 4 1 and GEMV 1 4·VL 4 1: a 4-column chunk of VL rows is one SMOPA /
// SDOT operand vector; the NEON I8MM / DotProd GEMMs 4 4 8 1 and the DotProd GEMV 1 4 8 1; the
// scalar (nr 8, kr 4) and x86 (nr 8 or 16) kernels.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_qsi8cxp_qsi8cx;

}  // namespace qmm
