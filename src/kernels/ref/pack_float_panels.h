// Panel packers for the float paths (F16 / F32 weights, F32 activations, no quantization):
//   lhs_pack_f32p_f32        F32 [m, k]  -> mr-row panels of F32
//   rhs_pack_nxk_f16p_f16    F16 [n, k]  -> nr-row panels of F16
//   rhs_pack_nxk_f32p_f32    F32 [n, k]  -> nr-row panels of F32
// In a panel of R rows, element (r, c) is at (c/kr)·R·kr + r·kr + c%kr, with k rounded up to
// kr (the padding is zero). Panel elements R·round_up(k, kr). sr does not change the layout.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const LhsPacker lhs_pack_f32p_f32;
extern const RhsPacker rhs_pack_nxk_f16p_f16;
extern const RhsPacker rhs_pack_nxk_f32p_f32;

}  // namespace qmm
