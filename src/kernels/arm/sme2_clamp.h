// The SME2 kernels' output clamp. FCLAMP (svclamp) clamps to the minimum / maximum *number*:
// it turns a NaN output into clamp_min, against the NaN policy (kernels/ukernel.h). FMAX and
// FMIN keep NaN, one instruction each per four vectors. Include only from SME2 sources.
#pragma once
#include <arm_sme.h>

namespace qmm::sme2 {
namespace {  // internal linkage: every kernel file is compiled with its own flags

__attribute__((always_inline)) inline svfloat32x4_t clamp_x4(svfloat32x4_t v, svfloat32_t lo,
                                                             svfloat32_t hi) __arm_streaming {
  return svmin_single_f32_x4(svmax_single_f32_x4(v, lo), hi);
}

}  // namespace
}  // namespace qmm::sme2
