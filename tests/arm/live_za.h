// SME ABI helpers of the Arm tests.
#pragma once
#include <cstddef>

#include "kernels/ukernel.h"

namespace qmm::armtest {

struct MatmulArgs {
  size_t m, n, k;
  const void* lhs;
  const void* rhs;
  float* dst;
  size_t stride;
  float lo, hi;
};

// True if ZA holds the caller's data again after calling `fn` with live ZA.
bool za_survives_call(MatmulFn fn, const MatmulArgs& a);

}  // namespace qmm::armtest
