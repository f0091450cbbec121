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
  const TileParams p = kernel_params(*u);
  struct Shape {
    size_t m, n, k;
    float lo, hi;
  };
  const size_t mr = u->gemv ? 1 : p.mr;
  const Shape shapes[] = {{1, 1, 32, -INFINITY, INFINITY},           {mr, p.nr, 64, -INFINITY, INFINITY},
                          {mr, p.nr + 5, 96, -INFINITY, INFINITY},   {mr, 2 * p.nr + 3, 200, -0.5f, 0.75f},
                          {u->gemv ? size_t{1} : size_t{5}, 3 * p.nr, 512, -INFINITY, 0.25f},
                          {u->gemv ? size_t{1} : 2 * mr + 1, 7, 13, -INFINITY, INFINITY}};
  uint32_t seed = 11;
  for (const Shape& s : shapes) {
    const std::vector<float> lhs = armtest::random_floats(s.m * s.k, seed++);
    const std::vector<uint8_t> rows = armtest::random_weights(u->type, s.n, s.k, seed++);
    const armtest::Packed packed = armtest::pack_for(*u, s.m, s.n, s.k, lhs, rows);
    const std::vector<float> got = armtest::run_kernel(*u, s.m, s.n, s.k, packed, s.lo, s.hi);
    const size_t stride = s.n + 3;
    std::vector<float> want(s.m * stride, 1e30f);
    kai(s.m, s.n, s.k, packed.lhs.data(), packed.rhs.data(), want.data(), stride * sizeof(float), sizeof(float), s.lo, s.hi);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(0, std::memcmp(&got[i], &want[i], sizeof(float)))
          << name << " m=" << s.m << " n=" << s.n << " k=" << s.k << " at (" << i / stride << ", " << i % stride
          << "): qmm " << got[i] << ", KleidiAI " << want[i];
    }
  }
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
