// A caller that keeps live ZA across a call to a microkernel (built with the SME2 flags only).
#include "live_za.h"

#include <arm_sme.h>

#include <cstring>
#include <vector>

namespace qmm::armtest {

// ZA is this function's own (__arm_new): fill it, call the kernel (a private-ZA function:
// the compiler sets up the lazy save through TPIDR2_EL0 and restores ZA after the call if
// the callee committed it), then read ZA back. LDR/STR ZA work outside streaming mode.
__arm_new("za") bool za_survives_call(MatmulFn fn, const MatmulArgs& a) {
  const size_t svlb = svcntsb();
  std::vector<uint8_t> pattern(svlb * svlb), back(svlb * svlb);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 7 + 3);
  for (size_t row = 0; row < svlb; ++row) svldr_za(static_cast<uint32_t>(row), pattern.data() + row * svlb);
  fn(a.m, a.n, a.k, a.lhs, a.rhs, a.dst, a.stride, a.lo, a.hi);
  for (size_t row = 0; row < svlb; ++row) svstr_za(static_cast<uint32_t>(row), back.data() + row * svlb);
  return std::memcmp(pattern.data(), back.data(), pattern.size()) == 0;
}

}  // namespace qmm::armtest
