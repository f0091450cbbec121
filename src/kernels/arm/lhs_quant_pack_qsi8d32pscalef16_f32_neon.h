// lhs_quant_pack_qsi8d32pscalef16_f32_neon: the NEON version of
// lhs_quant_pack_qsi8d32pscalef16_f32 (kernels/ref), writing the same bytes (its reference twin;
// layout documented there: per mr-row panel and 32-block, mr f16 scales then the int8 in
// chunks of kr/sr columns, rows interleaved).
// Per 32-block of a row: 8 LDR Q, FABS + FMAX tree and FMAXV for amax (a NaN wins), then the F32
// scale = amax / 127 and 1/scale as in the reference, 8 FMUL + 8 FCVTAS (round half away from
// zero, = roundf) and narrowing to int8, stored chunk by chunk. Base Armv8-A only.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const LhsPacker lhs_quant_pack_qsi8d32pscalef16_f32_neon;

}  // namespace qmm
