#include "kernels/x86/reference_packers.h"

#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"

namespace qmm {

const LhsPacker* reference_lhs_packer(const LhsPacker* p) {
  if (p == &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2) return &lhs_quant_pack_qsi8d32pscalef32sum_f32_ref;
  return p;
}

const RhsPacker* reference_rhs_packer(const RhsPacker* p) { return p; }

}  // namespace qmm
