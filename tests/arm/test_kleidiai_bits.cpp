// qmm's kernels that carry a KleidiAI name against KleidiAI's own kernel of that name, on the
// same packed buffers (qmm's packers, byte-identical to KleidiAI's: docs/arm.md), bit for bit,
// at the emulated SVL. KleidiAI is not part of qmm: scripts/kleidiai_build.sh builds the kernels
// from a KleidiAI git directory into ~/.cache, and the Arm build links them when configured with
// -DQMM_KLEIDIAI_LIB=<the library it prints>; without it this test skips, saying so.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

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
void kai_run_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot(size_t m, size_t n, size_t k, size_t bl,
                                                                     const void* lhs_packed, const void* rhs_packed,
                                                                     float* dst, size_t dst_stride_row,
                                                                     size_t dst_stride_col, float scalar_min,
                                                                     float scalar_max);
void kai_run_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa(size_t m, size_t n, size_t k, size_t bl,
                                                                    const void* lhs_packed, const void* rhs_packed,
                                                                    float* dst, size_t dst_stride_row,
                                                                    size_t dst_stride_col, float scalar_min,
                                                                    float scalar_max);
size_t kai_get_lhs_packed_size_lhs_pack_f16pmrx2_f32_neon(size_t m, size_t k, size_t bl, size_t mr, size_t kr,
                                                          size_t sr);
void kai_run_lhs_pack_f16pmrx2_f32_neon(size_t m, size_t k, size_t bl, size_t mr, size_t kr, size_t sr,
                                        size_t m_idx_start, const void* lhs, size_t lhs_stride, void* lhs_packed);
}
#endif

namespace qmm {
namespace {

#if QMM_HAVE_KLEIDIAI
// qmm's kernel `name` and KleidiAI's `kai` on the same packed buffers, bit for bit.
template <class Kai>
void compare(const char* name, Kai kai) {
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

// The Q4_0 GEMV (decode on SME2): the same int32 block sums, scale product (exact in F32) and
// fused multiply-add per block in K order as KleidiAI's, so the same bits (block length 32).
TEST(KleidiAIBits, Q4_0Sme2GemvOnKleidiAIsLayout) {
  compare("matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot",
          [](size_t m, size_t n, size_t k, const void* l, const void* r, float* d, size_t s, size_t, float lo, float hi) {
            kai_run_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot(m, n, k, 32, l, r, d, s, sizeof(float), lo,
                                                                               hi);
          });
}

constexpr const char* kF16Q4Gemm = "matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa";

// The F16-activation Q4_0 GEMM (what llama.cpp runs for Q4_0 prefill on SME2): the same F16
// weights and FMOPA order as KleidiAI's, so the same bits (its block length argument is 32).
TEST(KleidiAIBits, F16ActivationQ4_0GemmOnKleidiAIsLayout) {
  compare(kF16Q4Gemm, [](size_t m, size_t n, size_t k, const void* l, const void* r, float* d, size_t s, size_t,
                         float lo, float hi) {
    kai_run_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa(m, n, k, 32, l, r, d, s, sizeof(float), lo, hi);
  });
}

// Its LHS packer writes the bytes of KleidiAI's kai_lhs_pack_f16pmrx2_f32_neon (the rows KleidiAI
// writes; rows beyond m stay zero in both here), finite values of every F16 kind included:
// subnormals, ties, signed zeros, the largest finite.
TEST(KleidiAIBits, F16LhsPackerWritesKleidiAIsBytes) {
  const Ukernel* u = find_kernel(kF16Q4Gemm);
  if (u == nullptr) GTEST_SKIP() << "this build has no SME2 kernels";
  if (std::string why = unavailable_reason(*u, cpu_info()); !why.empty()) GTEST_SKIP() << why;
  const TileParams p = kernel_params(*u);
  const float kinds[] = {3e-8f, -6e-6f, 1e-5f, -0.0f, 0.0f, 65504.0f, -65519.0f, 1.00048828125f, 2049.0f, 0.1f};
  uint32_t seed = 5;
  for (size_t m : {size_t{1}, p.mr - 1, p.mr, p.mr + 3, 2 * p.mr + 1}) {
    for (size_t k : {32, 64, 96, 512}) {
      std::vector<float> x = armtest::random_floats(m * k, seed++);
      for (size_t i = 0; i < x.size(); i += 7) x[i] = kinds[i / 7 % std::size(kinds)];
      const size_t size = lhs_packed_size(*u, p, m, k);
      ASSERT_EQ(size, kai_get_lhs_packed_size_lhs_pack_f16pmrx2_f32_neon(m, k, 32, p.mr, p.kr, p.sr));
      std::vector<uint8_t> ours(size, 0xcd), theirs(size, 0);
      u->lhs->run(m, k, p.mr, p.kr, p.sr, x.data(), k * sizeof(float), ours.data());
      kai_run_lhs_pack_f16pmrx2_f32_neon(m, k, 32, p.mr, p.kr, p.sr, 0, x.data(), k * sizeof(float), theirs.data());
      ASSERT_EQ(ours, theirs) << "m=" << m << " k=" << k;
    }
  }
}
#else
TEST(KleidiAIBits, Qc4Sme2GemmOnKleidiAIsLayout) {
  GTEST_SKIP() << "KleidiAI is not linked: build it with scripts/kleidiai_build.sh and configure with "
                  "-DQMM_KLEIDIAI_LIB=<the library it prints>";
}
#endif

}  // namespace
}  // namespace qmm
