// The threaded driver: results bitwise identical for any thread count, equal to one kernel
// call, no allocation per call in steady state (scratch reuse), shape errors.
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "matmul/matmul.h"
#include "test_util.h"

namespace qmm {
namespace {

std::vector<float> run_driver(const PackedWeights& w, size_t m, const std::vector<float>& x, int threads) {
  Context ctx(threads);
  std::vector<float> y(m * w.n(), NAN);
  matmul(w, m, x.data(), w.k() * 4, y.data(), w.n() * 4, -INFINITY, INFINITY, ctx);
  return y;
}

TEST(Driver, BitwiseIdenticalForAnyThreadCount) {
  for (WeightType type : {WeightType::q4_0, WeightType::q8_0, WeightType::f16, WeightType::f32, WeightType::qc8, WeightType::qc4}) {
    const size_t n = 300, k = 160;
    const std::vector<uint8_t> rows = test::random_weights(type, n, k, 1);
    const PackedWeights w = PackedWeights::pack(type, n, k, rows.data(), KernelFilter{});
    for (size_t m : {1u, 5u, 37u, 130u}) {
      const std::vector<float> x = test::random_floats(m * k, m);
      const std::vector<float> one = run_driver(w, m, x, 1);
      for (int t : {2, 3, 7}) {
        const std::vector<float> many = run_driver(w, m, x, t);
        ASSERT_EQ(0, std::memcmp(one.data(), many.data(), one.size() * 4))
            << type_name(type) << " m=" << m << " threads=" << t << " kernel " << w.kernel_for(m).name;
      }
    }
  }
}

// The K-quants likewise (k = one 256-element super-block: threads split rows and columns, and
// the SME2 K kernels are slow under qemu).
TEST(Driver, KQuantsBitwiseIdenticalForAnyThreadCount) {
  for (WeightType type : {WeightType::q4_k, WeightType::q5_k, WeightType::q6_k, WeightType::iq4_nl}) {
    const size_t n = 70, k = 256;
    const std::vector<uint8_t> rows = test::random_weights(type, n, k, 1);
    const PackedWeights w = PackedWeights::pack(type, n, k, rows.data(), KernelFilter{});
    for (size_t m : {1u, 5u, 37u}) {
      const std::vector<float> x = test::random_floats(m * k, m);
      const std::vector<float> one = run_driver(w, m, x, 1);
      for (int t : {2, 3}) {
        const std::vector<float> many = run_driver(w, m, x, t);
        ASSERT_EQ(0, std::memcmp(one.data(), many.data(), one.size() * 4))
            << type_name(type) << " m=" << m << " threads=" << t << " kernel " << w.kernel_for(m).name;
      }
    }
  }
}

// Decode splits a matrix under threads x the chunk floor evenly (a 0.5B model's 896 x 896 and
// 128 x 896 Q4_0 GEMVs at 2 threads), and a large one in shrinking grabs from 1/threads down.
TEST(Driver, DecodeColumnGrabsSplitSmallMatricesEvenly) {
  for (auto [n, k] : {std::pair<size_t, size_t>{896, 896}, {128, 896}, {4864, 896}}) {
    const std::vector<uint8_t> rows = test::random_weights(WeightType::q4_0, n, k, 1);
    const PackedWeights w = PackedWeights::pack(WeightType::q4_0, n, k, rows.data(), KernelFilter{});
    const size_t step = w.params_for(1).n_step;
    EXPECT_EQ(column_grabs(w, 1, 1), std::vector<size_t>{n});
    for (size_t threads : {size_t{2}, size_t{3}}) {
      const std::vector<size_t> g = column_grabs(w, 1, threads);
      size_t sum = 0;
      for (size_t c : g) sum += c;
      EXPECT_EQ(sum, n);
      const size_t even = ((n + threads - 1) / threads + step - 1) / step * step;  // a share, in whole panels
      if (n * k / 2 < threads * (size_t{256} << 10)) {  // under threads x 256 KiB of Q4_0
        EXPECT_LE(g.size(), threads + 1) << n << " x " << k;
        for (size_t c : g) EXPECT_LE(c, even) << n << " x " << k;
      } else {
        EXPECT_EQ(g[0], even) << n << " x " << k;
        EXPECT_GT(g.size(), threads) << n << " x " << k;
      }
    }
  }
}

TEST(Driver, MatchesOneKernelCallAndStrides) {
  const size_t m = 9, n = 70, k = 96;
  const std::vector<uint8_t> rows = test::random_weights(WeightType::q4_0, n, k, 2);
  const PackedWeights w = PackedWeights::pack(WeightType::q4_0, n, k, rows.data(), KernelFilter{});
  const std::vector<float> x = test::random_floats(m * k, 3);
  const std::vector<float> y = run_driver(w, m, x, 3);
  // Strided input and output: row strides larger than the rows.
  std::vector<float> xs(m * (k + 5)), ys(m * (n + 3), -7.0f);
  for (size_t i = 0; i < m; ++i) std::memcpy(&xs[i * (k + 5)], &x[i * k], k * 4);
  Context ctx(2);
  matmul(w, m, xs.data(), (k + 5) * 4, ys.data(), (n + 3) * 4, -INFINITY, INFINITY, ctx);
  for (size_t i = 0; i < m; ++i) {
    ASSERT_EQ(0, std::memcmp(&ys[i * (n + 3)], &y[i * n], n * 4)) << i;
    for (size_t j = n; j < n + 3; ++j) ASSERT_EQ(ys[i * (n + 3) + j], -7.0f) << "wrote outside the row";
  }
}

TEST(Driver, ScratchIsReusedAcrossCalls) {
  const size_t n = 64, k = 64;
  const std::vector<uint8_t> rows = test::random_weights(WeightType::q8_0, n, k, 4);
  const PackedWeights w = PackedWeights::pack(WeightType::q8_0, n, k, rows.data(), KernelFilter{});
  Context ctx(2);
  std::vector<float> x = test::random_floats(32 * k, 5), y(32 * n);
  matmul(w, 32, x.data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, ctx);
  const uint8_t* scratch = ctx.scratch(0);
  for (size_t m : {1u, 7u, 32u}) {
    matmul(w, m, x.data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, ctx);
    EXPECT_EQ(ctx.scratch(0), scratch) << "scratch reallocated for m=" << m;
  }
}

TEST(Driver, RejectsBadShapes) {
  const std::vector<uint8_t> rows(1 << 16);
  EXPECT_THROW(PackedWeights::pack(WeightType::q4_0, 4, 48, rows.data(), KernelFilter{}), Error);  // k % 32
  EXPECT_THROW(PackedWeights::pack(WeightType::q8_0, 0, 32, rows.data(), KernelFilter{}), Error);
  EXPECT_THROW(PackedWeights::pack(WeightType::f32, 4, 0, rows.data(), KernelFilter{}), Error);
  EXPECT_THROW(PackedWeights::pack(WeightType::f32, 4, 8, nullptr, KernelFilter{}), Error);
  EXPECT_NO_THROW(PackedWeights::pack(WeightType::f16, 3, 7, rows.data(), KernelFilter{}));
}

TEST(ThreadPool, ParallelForVisitsEveryTaskOnce) {
  for (int t : {1, 2, 5}) {
    ThreadPool pool(t);
    std::vector<std::atomic<int>> seen(1000);
    for (int rep = 0; rep < 20; ++rep) pool.parallel_for(seen.size(), [&](size_t i, int) { seen[i]++; });
    for (auto& s : seen) ASSERT_EQ(s.load(), 20);
  }
  EXPECT_THROW(ThreadPool(0), Error);
}

// parallel_for lets workers skip jobs that closed before they woke, and run() must still
// reach every thread: interleave both, with task counts below and above the thread count.
TEST(ThreadPool, RunAndParallelForInterleaved) {
  for (int t : {2, 3, 5}) {
    ThreadPool pool(t);
    std::vector<std::atomic<int>> per_thread(static_cast<size_t>(t));
    std::vector<std::atomic<int>> tasks(64);
    int runs = 0, sum = 0;
    for (int rep = 0; rep < 2000; ++rep) {
      const size_t count = static_cast<size_t>(rep % 9) * static_cast<size_t>(rep % 7 + 1);  // 0..54
      pool.parallel_for(count, [&](size_t i, int) { tasks[i]++; });
      sum += static_cast<int>(count);
      if (rep % 3 == 0) {
        pool.run([&](int i) { per_thread[static_cast<size_t>(i)]++; });
        ++runs;
      }
    }
    int done = 0;
    for (auto& c : tasks) done += c.load();
    EXPECT_EQ(done, sum);
    for (auto& c : per_thread) EXPECT_EQ(c.load(), runs);
  }
}

// Idle-prefetch hints are only hints: any range (unmapped, huge, stale, out of range of the
// workers) leaves the jobs' results alone and the pool responsive.
TEST(ThreadPool, IdlePrefetchHintsNeverChangeJobs) {
  std::vector<uint8_t> buf(1 << 20, 1);
  for (int t : {1, 2, 3}) {
    ThreadPool pool(t);
    std::vector<std::atomic<int>> tasks(16);
    for (int rep = 0; rep < 200; ++rep) {
      for (int w = -1; w <= t; ++w) {
        pool.prefetch_while_idle(w, rep % 2 ? buf.data() : reinterpret_cast<const void*>(uintptr_t{64}), rep % 3 ? buf.size() : size_t{1} << 40,
                                 buf.data() + rep, static_cast<size_t>(rep) << 12);
      }
      pool.parallel_for(tasks.size(), [&](size_t i, int) { tasks[i]++; });
    }
    for (auto& c : tasks) EXPECT_EQ(c.load(), 200);
  }
}

}  // namespace
}  // namespace qmm
