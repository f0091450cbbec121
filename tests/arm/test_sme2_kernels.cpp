// Every SME2 kernel of the list against the scalar reference of its weight type (or its own,
// Ukernel::reference, where its numerics differ: F16 activations), on shapes
// below, at and above the SVL-derived tiles of the emulated CPU (the suite runs at SVL 128,
// 256 and 512 bits). The lead's tests/test_kernels.cpp covers all kernels more widely; this
// file keeps the SME2 kernels checked at every SVL even where that suite is filtered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "arm_test_util.h"
#include "core/cpu.h"
#include "matmul/select.h"

namespace qmm {
namespace {

const Ukernel* scalar_for(WeightType type, bool gemv) {
  for (const Ukernel* u : kernel_list()) {
    if (u->isa == Isa::scalar && u->type == type && u->gemv == gemv) return u;
  }
  return nullptr;
}

void check_kernel(const Ukernel& u, size_t m, size_t n, size_t k, float lo, float hi, uint32_t seed) {
  // A kernel with numerics of its own (the F16-activation GEMM) against its own reference.
  const Ukernel* ref = u.reference ? u.reference : scalar_for(u.type, u.gemv);
  ASSERT_NE(ref, nullptr);
  const std::vector<float> lhs = armtest::random_floats(m * k, seed);
  const std::vector<uint8_t> rows = armtest::random_weights(u.type, n, k, seed + 1);
  const std::vector<float> got = armtest::run_kernel(u, m, n, k, armtest::pack_for(u, m, n, k, lhs, rows), lo, hi);
  const std::vector<float> want =
      armtest::run_kernel(*ref, m, n, k, armtest::pack_for(*ref, m, n, k, lhs, rows), lo, hi);
  const size_t stride = n + 3;
  const float tol = 1e-5f * static_cast<float>(k) + 1e-4f;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < stride; ++j) {
      const float g = got[i * stride + j], w = want[i * stride + j];
      if (j >= n) {
        ASSERT_EQ(g, 1e30f) << "wrote past n at row " << i << " col " << j;
        continue;
      }
      ASSERT_LE(std::fabs(g - w), tol * (1.0f + std::fabs(w)))
          << u.name << " m=" << m << " n=" << n << " k=" << k << " at (" << i << ", " << j << ")";
    }
  }
}

class Sme2Kernels : public ::testing::TestWithParam<const Ukernel*> {};

TEST_P(Sme2Kernels, MatchScalarReference) {
  const Ukernel& u = *GetParam();
  if (std::string why = unavailable_reason(u, cpu_info()); !why.empty()) GTEST_SKIP() << why;
  const TileParams p = kernel_params(u);
  const size_t nr = p.nr, mr = p.mr;
  const size_t ms[] = {1, mr - 1, mr + 1, 2 * mr};
  const size_t ns[] = {3, nr, nr + 5};
  const bool blocks = is_block_type(u.type);
  const size_t bl = blocks ? block_len(u.type) : 32;  // 256 for the K-quants: two k suffice
  const std::vector<size_t> ks = bl > 32 ? std::vector<size_t>{bl, 2 * bl}
                                         : std::vector<size_t>{bl, 3 * bl, blocks ? 2 * bl : 37};  // float: tails
  const size_t kc = bl > 128 ? bl : 128;  // k of the clamp checks
  uint32_t seed = 1;
  for (size_t m : ms) {
    if (m == 0 || (u.gemv && m != 1)) continue;
    for (size_t n : ns) {
      for (size_t k : ks) {
        check_kernel(u, m, n, k, -INFINITY, INFINITY, seed++);
        if (HasFatalFailure()) return;
      }
    }
  }
  check_kernel(u, u.gemv ? 1 : mr + 2, nr + 7, kc, -0.5f, 0.75f, 99);  // two-sided clamp
  check_kernel(u, u.gemv ? 1 : mr + 2, nr + 7, kc, -INFINITY, 0.25f, 100);
}

// A GEMM over several row tiles gives each tile the bits of a call on that tile alone. The
// F16-activation Q4_0 GEMM runs them differently (m > VL: its weights dequantized once per panel
// and slice of k into a stack buffer, the partial sums through dst between slices; m <= VL:
// straight from the nibbles): armtest::first_difference's shapes include several tiles, ragged
// edges and a k of several slices at every SVL.
TEST_P(Sme2Kernels, RowTilesTogetherGiveEachTilesBits) {
  const Ukernel& u = *GetParam();
  if (u.gemv) GTEST_SKIP() << "a GEMV has one row";
  if (std::string why = unavailable_reason(u, cpu_info()); !why.empty()) GTEST_SKIP() << why;
  const TileParams p = kernel_params(u);
  auto tile_by_tile = [&](size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride,
                          float lo, float hi) {
    for (size_t m0 = 0; m0 < m; m0 += p.mr) {
      u.run(std::min(p.mr, m - m0), n, k, static_cast<const uint8_t*>(lhs) + lhs_packed_offset(u, p, m0, k), rhs,
            reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + m0 * stride), stride, lo, hi);
    }
  };
  EXPECT_EQ(armtest::first_difference(u, tile_by_tile, 5), "");
}

std::vector<const Ukernel*> sme2_kernels() {
  std::vector<const Ukernel*> out;
  for (const Ukernel* u : kernel_list()) {
    if (u->isa == Isa::sme2) out.push_back(u);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(List, Sme2Kernels, ::testing::ValuesIn(sme2_kernels()),
                         [](const ::testing::TestParamInfo<const Ukernel*>& p) { return std::string(p.param->name); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Sme2Kernels);

}  // namespace
}  // namespace qmm
