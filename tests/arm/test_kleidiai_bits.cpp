// qmm's kernels that carry a KleidiAI name against KleidiAI's own kernel of that name, on the
// same packed buffers (qmm's packers, byte-identical to KleidiAI's: docs/arm.md), bit for bit,
// at the emulated SVL. KleidiAI is not part of qmm: scripts/kleidiai_build.sh builds the kernels
// from a KleidiAI git directory into ~/.cache, and the Arm build links them when configured with
// -DQMM_KLEIDIAI_LIB=<the library it prints>; without it this test skips, saying so.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "arm_test_util.h"
#include "core/cpu.h"
#include "matmul/select.h"

#if QMM_HAVE_KLEIDIAI
extern "C" {
void kai_run_matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa(size_t m, size_t n, size_t k,
                                                                      const void* lhs_packed, const void* rhs_packed,
                                                                      float* dst, size_t dst_stride_row,
                                                                      size_t dst_stride_col, float scalar_min,
                                                                      float scalar_max);
void kai_run_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot(size_t m, size_t n, size_t k,
                                                                  const void* lhs_packed, const void* rhs_packed,
                                                                  float* dst, size_t dst_stride_row,
                                                                  size_t dst_stride_col, float scalar_min,
                                                                  float scalar_max);
}
#endif

namespace qmm {
namespace {

#if QMM_HAVE_KLEIDIAI
using KaiRun = void (*)(size_t, size_t, size_t, const void*, const void*, float*, size_t, size_t, float, float);

// qmm's kernel `name` and KleidiAI's `kai` on the same packed buffers, bit for bit.
void compare(const char* name, KaiRun kai) {
  const Ukernel* u = find_kernel(name);
  if (u == nullptr) GTEST_SKIP() << "this build has no SME2 kernels";
  if (std::string why = unavailable_reason(*u, cpu_info()); !why.empty()) GTEST_SKIP() << why;
  auto run_kai = [kai](size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride,
                       float lo, float hi) { kai(m, n, k, lhs, rhs, dst, stride, sizeof(float), lo, hi); };
  EXPECT_EQ(armtest::first_difference(*u, run_kai, 11), "") << "(qmm vs KleidiAI)";
}

TEST(KleidiAIBits, Qc4Sme2GemmOnKleidiAIsLayout) {
  compare("matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa",
          kai_run_matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa);
}
TEST(KleidiAIBits, Qc4Sme2GemvOnKleidiAIsLayout) {
  compare("matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot",
          kai_run_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot);
}
#else
TEST(KleidiAIBits, Qc4Sme2GemmOnKleidiAIsLayout) {
  GTEST_SKIP() << "KleidiAI is not linked: build it with scripts/kleidiai_build.sh and configure with "
                  "-DQMM_KLEIDIAI_LIB=<the library it prints>";
}
#endif

}  // namespace
}  // namespace qmm
