// The plain C++ twin of every vectorized x86 packer, for byte-exact packer tests:
// reference_lhs_packer(p) / reference_rhs_packer(p) return the scalar packer that writes the
// same layout as `p`, or `p` itself when `p` is already plain C++ (the RHS packers, which run
// once at load, are).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

const LhsPacker* reference_lhs_packer(const LhsPacker* p);
const RhsPacker* reference_rhs_packer(const RhsPacker* p);

}  // namespace qmm
