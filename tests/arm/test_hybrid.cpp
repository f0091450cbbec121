// The hybrid SME + NEON split of one matmul (docs/design.md §6): the NEON twin of the SME2 Q4_0
// GEMM gives the SME2 kernel's bits on its packed operands at the emulated SVL, and a matmul
// whose tiles go partly to the twin equals the SME2-only one bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "arm_test_util.h"
#include "core/cpu.h"
#include "core/error.h"
#include "matmul/matmul.h"
#include "matmul/select.h"

namespace qmm {
namespace {

const Ukernel* sme2_q4_gemm() { return find_kernel("matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa"); }

// Why the SME2 Q4_0 GEMM cannot run here ("" when it can); with `twin`, also why it has no NEON twin.
std::string sme2_q4_skip_reason(bool twin) {
  const Ukernel* u = sme2_q4_gemm();
  if (u == nullptr) return "this build has no SME2 kernels";
  if (std::string why = unavailable_reason(*u, cpu_info()); !why.empty()) return why;
  if (twin && neon_twin(*u) == nullptr) return "no NEON twin here (DotProd missing)";
  return "";
}

// The SME2 Q4_0 GEMM's packed weights with the Q4_0 GEMV selection pairs with it (the one that
// reads its packed RHS), whichever GEMM selection prefers at this SVL.
PackedWeights sme2_q4_weights(size_t n, size_t k, const std::vector<uint8_t>& rows) {
  const KernelPair pair = select_kernels(WeightType::q4_0, KernelFilter{}, cpu_info());
  EXPECT_TRUE(shares_packed_rhs(*pair.gemv, *sme2_q4_gemm())) << pair.gemv->name;
  return PackedWeights::pack_with(*sme2_q4_gemm(), *pair.gemv, n, k, rows.data());
}

TEST(Hybrid, NeonTwinGivesTheSme2KernelsBits) {
  if (std::string why = sme2_q4_skip_reason(false); !why.empty()) GTEST_SKIP() << why;
  const Ukernel* u = sme2_q4_gemm();
  const MatmulFn twin = neon_twin(*u);
  ASSERT_NE(twin, nullptr) << "no NEON twin at SVL " << cpu_info().svl_bytes * 8;
  EXPECT_EQ(armtest::first_difference(*u, twin, 3), "") << "(SME2 vs its NEON twin)";
}

TEST(Hybrid, SplitMatmulEqualsSme2Only) {
  if (std::string why = sme2_q4_skip_reason(true); !why.empty()) GTEST_SKIP() << why;
  const size_t n = 1000, k = 128, m = 130;  // 3 row tiles
  const std::vector<uint8_t> rows = armtest::random_weights(WeightType::q4_0, n, k, 5);
  const PackedWeights w = sme2_q4_weights(n, k, rows);
  const std::vector<float> x = armtest::random_floats(m * k, 6);
  auto run = [&](Context& ctx) {
    std::vector<float> y(m * n, NAN);
    matmul(w, m, x.data(), k * 4, y.data(), n * 4, -INFINITY, 2.0f, ctx);
    return y;
  };
  Context sme_only(3);
  sme_only.set_sme_threads(0);
  const std::vector<float> want = run(sme_only);
  for (int sme : {1, 2}) {
    Context hybrid(3);
    hybrid.set_sme_threads(sme);
    for (int rep = 0; rep < 2; ++rep) {  // the first call measures the ratio on tile 0
      const std::vector<float> got = run(hybrid);
      ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "sme threads " << sme;
    }
    EXPECT_GT(hybrid.neon_sme_ratio(), 0.0);
    std::printf("sme threads %d of 3: %zu NEON tiles in the last call, NEON/SME2 time per tile %.2f\n", sme,
                hybrid.last_neon_tiles(), hybrid.neon_sme_ratio());
  }
}

// The split also covers a matmul of one row tile (m <= VL: columns split by tiles instead of
// guided chunks) and an MoE layer's matmul_group, whose products' tiles go to one job.
TEST(Hybrid, OneRowTileAndGroupSplitsEqualSme2Only) {
  if (std::string why = sme2_q4_skip_reason(true); !why.empty()) GTEST_SKIP() << why;
  const size_t n = 700, k = 96;
  const std::vector<uint8_t> rows = armtest::random_weights(WeightType::q4_0, n, k, 8);
  const PackedWeights w = sme2_q4_weights(n, k, rows);
  const Ukernel* u = sme2_q4_gemm();
  const size_t ms[] = {kernel_params(*u).mr, 37, 2 * kernel_params(*u).mr + 3};  // one row tile, then several
  std::vector<std::vector<float>> xs;
  for (size_t m : ms) xs.push_back(armtest::random_floats(m * k, static_cast<uint32_t>(m)));
  auto one = [&](Context& ctx, size_t i) {
    std::vector<float> y(ms[i] * n, NAN);
    matmul(w, ms[i], xs[i].data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, ctx);
    return y;
  };
  auto group = [&](Context& ctx) {
    std::vector<std::vector<float>> ys;
    std::vector<MatmulPart> parts;
    for (size_t i = 0; i < std::size(ms); ++i) ys.emplace_back(ms[i] * n, NAN);
    for (size_t i = 0; i < std::size(ms); ++i) parts.push_back({&w, ms[i], xs[i].data(), ys[i].data(), 0, 0});
    matmul_group(parts, ctx);
    return ys;
  };
  Context sme_only(3);
  sme_only.set_sme_threads(0);
  ASSERT_EQ(w.kernel_for(ms[0]).run, u->run) << "one full row tile runs the SME2 GEMM";
  for (size_t i = 0; i < std::size(ms); ++i) {
    if (w.kernel_for(ms[i]).run != u->run) continue;  // a few-rows kernel of its own: no twin
    Context hybrid(3);
    hybrid.set_sme_threads(1);
    const std::vector<float> want = one(sme_only, i), got = one(hybrid, i);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "m=" << ms[i];
    EXPECT_GT(hybrid.neon_sme_ratio(), 0.0) << "m=" << ms[i] << ": the split did not run";
  }
  Context hybrid(3);
  hybrid.set_sme_threads(1);
  const auto want = group(sme_only), got = group(hybrid);
  for (size_t i = 0; i < std::size(ms); ++i) {
    EXPECT_EQ(0, std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float))) << "group part " << i;
  }
  const bool all_twins = std::all_of(std::begin(ms), std::end(ms), [&](size_t m) { return w.kernel_for(m).run == u->run; });
  EXPECT_EQ(hybrid.neon_sme_ratio() > 0.0, all_twins) << "the group split runs exactly when every kernel has a twin";
}

// Where selection prefers a Q4_0 GEMM without a NEON twin (the F16-activation one) and the wide
// GEMM on the same packed weights has one (the int8 GEMM), a context asked to split runs that
// pair, split: the caller's request is not dropped, and the bits are the int8 SME2 GEMM's.
TEST(Hybrid, ASplitAskedOfTheF16GemmRunsTheInt8Pair) {
  if (std::string why = sme2_q4_skip_reason(true); !why.empty()) GTEST_SKIP() << why;
  const KernelPair pair = select_kernels(WeightType::q4_0, KernelFilter{}, cpu_info());
  if (pair.gemm->lhs->max_abs == INFINITY || pair.wide != sme2_q4_gemm()) {
    GTEST_SKIP() << "Q4_0 prefill takes " << pair.gemm->name << " here, not a narrow-range GEMM backed by the int8 one";
  }
  const size_t n = 1000, k = 128, m = 130;  // 3 row tiles at SVL 512
  const std::vector<uint8_t> rows = armtest::random_weights(WeightType::q4_0, n, k, 11);
  const PackedWeights chosen = PackedWeights::pack(WeightType::q4_0, n, k, rows.data(), KernelFilter{});
  const PackedWeights int8 = sme2_q4_weights(n, k, rows);
  ASSERT_EQ(chosen.kernel_for(m).run, pair.gemm->run);
  const std::vector<float> x = armtest::random_floats(m * k, 12);
  auto run = [&](const PackedWeights& w, Context& ctx) {
    std::vector<float> y(m * n, NAN);
    matmul(w, m, x.data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, ctx);
    return y;
  };
  Context sme_only(3);
  const std::vector<float> want = run(int8, sme_only);
  Context split(3);
  split.set_sme_threads(1);
  const std::vector<float> got = run(chosen, split);
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
  EXPECT_GT(split.neon_sme_ratio(), 0.0) << "the split did not run";
  std::vector<MatmulPart> parts{{&chosen, m, x.data(), nullptr, 0, 0}};
  std::vector<float> y(m * n, NAN);
  parts[0].dst = y.data();
  Context group_split(3);
  group_split.set_sme_threads(1);
  matmul_group(parts, group_split);
  EXPECT_EQ(0, std::memcmp(y.data(), want.data(), y.size() * sizeof(float))) << "matmul_group";
  EXPECT_GT(group_split.neon_sme_ratio(), 0.0) << "the group's split did not run";
}

TEST(Hybrid, SmeThreadsFromTheEnvironment) {
  const char* old = std::getenv("QMM_SME_THREADS");
  const std::string saved = old ? old : "";
  setenv("QMM_SME_THREADS", "2", 1);
  EXPECT_EQ(Context(1).sme_threads(), 2);
  setenv("QMM_SME_THREADS", "two", 1);
  EXPECT_THROW(Context(1), Error);
  setenv("QMM_SME_THREADS", "-1", 1);
  EXPECT_THROW(Context(1), Error);
  if (old) {
    setenv("QMM_SME_THREADS", saved.c_str(), 1);
  } else {
    unsetenv("QMM_SME_THREADS");
  }
  Context ctx(1);
  EXPECT_THROW(ctx.set_sme_threads(-2), Error);
}

}  // namespace
}  // namespace qmm
