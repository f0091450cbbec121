// qmm bench matmul's paired DRAM rounds (src/bench/paired.h): every round runs the kernel over
// every copy and reads exactly those copies' bytes once; at least 3 rounds; the copies are
// identical packings.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bench/paired.h"
#include "core/random.h"

namespace qmm {
namespace {

size_t g_reads = 0, g_read_bytes = 0;
double fake_read(ThreadPool&, const uint8_t* const*, const size_t* bytes, size_t count) {
  ++g_reads;
  for (size_t i = 0; i < count; ++i) g_read_bytes += bytes[i];
  return 1e-3;
}
double fake_clock() {
  static double t = 0;
  return t += 0.5e-3;
}

TEST(BenchPaired, RoundsPairKernelAndRead) {
  const size_t n = 64, k = 64;
  Context ctx(1);
  const std::vector<float> w = random_floats(n * k, 1);
  std::vector<uint8_t> rows(row_bytes(WeightType::q8_0, k) * n);
  quantize_rows(WeightType::q8_0, w.data(), rows.data(), n, k);
  const std::vector<PackedWeights> copies = bench::pack_copies(WeightType::q8_0, n, k, rows.data(), {}, 3, ctx.pool());
  ASSERT_EQ(copies.size(), 3u);
  EXPECT_EQ(std::memcmp(copies[0].data(), copies[2].data(), copies[0].bytes()), 0);
  const std::vector<float> lhs = random_floats(k, 2);
  std::vector<float> dst(n);
  const bench::PairedRounds r = bench::paired_dram(copies, 1, lhs.data(), dst.data(), ctx, 0, fake_clock, fake_read);
  ASSERT_EQ(r.kernel_s.size(), 3u);  // min_time 0: the 3 rounds at least
  EXPECT_EQ(g_reads, 3u);
  EXPECT_EQ(g_read_bytes, 3 * 3 * copies[0].bytes());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(r.kernel_s[i], 0.5e-3 / 3);  // one clock step per round, over 3 copies
    EXPECT_DOUBLE_EQ(r.ratio[i], (1e-3 / 3) / (0.5e-3 / 3));
    EXPECT_DOUBLE_EQ(r.read_gbs[i], static_cast<double>(copies[0].bytes()) / (1e-3 / 3) / 1e9);
  }
}

}  // namespace
}  // namespace qmm
