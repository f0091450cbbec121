// lhs_pack_f16pmrx2_f32_neon: the NEON version of lhs_pack_f16pmrx2_f32 (kernels/ref: the layout,
// the rounding and the NaN rule are documented there), writing the same bytes (its reference
// twin), KleidiAI's packer's name. Per 8 values of a row: 2 LDR Q, 2 FCVTN (round to nearest
// even, as KleidiAI's packer converts), the non-finite F16 lanes replaced by NaN (AND, CMEQ, BSL),
// and each F16 pair stored to its place in the panel (4 ST1 lane). Base Armv8-A only.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const LhsPacker lhs_pack_f16pmrx2_f32_neon;

}  // namespace qmm
