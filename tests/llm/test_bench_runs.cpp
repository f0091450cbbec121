// The measurements of `qmm bench model` (llm/bench_runs.h) on a tiny synthetic model: the cache
// at each depth, the runs' token counts, the paired read over exactly the bytes a token read,
// and the bounds' arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "llm/bench_runs.h"
#include "llm/model.h"
#include "llm/moe.h"
#include "llm/synth.h"

namespace qmm::llm {
namespace {

std::string tiny(const std::string& shape) {
  const std::string path = ::testing::TempDir() + "qmm_bench_runs_" + shape + ".gguf";
  gguf::synth_model(*gguf::find_synth_shape(shape), WeightType::q8_0, 1, path, 1, {.replace = true, .inputs = {}});
  return path;
}

TEST(BenchRuns, BoundsArithmetic) {
  EXPECT_DOUBLE_EQ(decode_bound(1e9, 10), 10);
  EXPECT_EQ(decode_bound(1e9, 0), 0);  // no limits measured
  const TokenCost c{0, 2e9, 1e9};
  EXPECT_DOUBLE_EQ(prefill_bound(c, 100, 50), 1.0 / (2e9 / 100e9 + 1e9 / 50e9));
  EXPECT_DOUBLE_EQ(prefill_bound(c, 100, 0), 1.0 / (2e9 / 100e9));
  EXPECT_EQ(prefill_bound(c, 0, 0), 0);
  // (weights + KV bytes per token) × tokens/s: 584 MB + 538 MB at 14 tok/s is 15.708 GB/s.
  EXPECT_DOUBLE_EQ(effective_gbs(584e6, 538e6, 14), 1122e6 * 14 / 1e9);
  EXPECT_DOUBLE_EQ(effective_gbs(1e9, 0, 20), 20);
  EXPECT_DOUBLE_EQ(effective_gbs(1e9, 1e9, 10) / effective_gbs(1e9, 0, 25), 0.8);  // the ratio to depth 0
}

// The deepest depth is prefilled once and restored into every State (each thread count) and
// depth: the cache a test starts from is byte for byte the one a prefill leaves; a slot file of
// the fill serves a later process the same way, and a file of too few positions is refused.
TEST(BenchRuns, DepthFilledOnceAndRestored) {
  const std::string path = tiny("tiny");
  Context ctx1(1), ctx2(2);
  const Model model = Model::load(path, {}, ctx1.pool());
  auto cache = [](const State& s, size_t n) {
    std::vector<uint8_t> kv(s.kv_copy_bytes(n));
    s.kv_read(0, 0, n, kv.data());
    return kv;
  };
  State plain(model, 64, 16, ctx1);
  BenchRuns ref(model, plain, 40, 16);
  ref.to_depth(30);
  const std::vector<uint8_t> want30 = cache(plain, 30);
  ref.to_depth(12);
  const std::vector<uint8_t> want12 = cache(plain, 12);
  ref.to_depth(20);
  const std::vector<uint8_t> want20 = cache(plain, 20);
  const std::string file = ::testing::TempDir() + "qmm_bench_runs_depth.slot";
  std::remove(file.c_str());
  DepthFill fill{30, file};
  {
    State s(model, 64, 16, ctx1);
    BenchRuns runs(model, s, 40, 16, &fill);
    runs.to_depth(12);  // fills 30 once, keeps 12
    EXPECT_EQ(fill.positions, 30u);
    EXPECT_FALSE(fill.from_file);
    EXPECT_EQ(fill.threads, 1u);
    EXPECT_EQ(cache(s, 12), want12);
    runs.decode(12, 3, nullptr);
    runs.to_depth(30);
    EXPECT_EQ(cache(s, 30), want30);
  }
  {
    State s(model, 64, 16, ctx2);  // another thread count: restored, not prefilled
    BenchRuns runs(model, s, 40, 16, &fill);
    fill.seconds = -1;
    runs.to_depth(30);
    EXPECT_EQ(fill.seconds, -1);
    EXPECT_EQ(cache(s, 30), want30);
  }
  {
    DepthFill again{30, file};  // a later process: read from the file
    State s(model, 64, 16, ctx2);
    BenchRuns runs(model, s, 40, 16, &again);
    runs.to_depth(20);
    EXPECT_TRUE(again.from_file);
    EXPECT_EQ(cache(s, 20), want20);
    runs.to_depth(30);
    EXPECT_EQ(cache(s, 30), want30);
  }
  {
    DepthFill deeper{35, file};
    State s(model, 64, 16, ctx1);
    BenchRuns runs(model, s, 40, 16, &deeper);
    EXPECT_THROW(runs.to_depth(35), Error);
  }
  std::remove(file.c_str());
}

TEST(BenchRuns, RunsFillTheCacheAndPairEveryToken) {
  for (const char* shape : {"tiny", "tiny-qwen3moe"}) {
    Context ctx(2);
    const Model model = Model::load(tiny(shape), {}, ctx.pool());
    const TokenCost cost = token_cost(model);
    EXPECT_DOUBLE_EQ(cost.weight_bytes, static_cast<double>(model.stats().active_bytes + model.config().n_embd * 4)) << shape;
    EXPECT_DOUBLE_EQ(cost.int8_ops + cost.float_ops, static_cast<double>(model.stats().matmul_ops)) << shape;
    State s(model, 64, 16, ctx);
    BenchRuns runs(model, s, 40, 16);
    runs.warm_up();
    EXPECT_EQ(s.pos(), 1u);
    runs.to_depth(20);  // two batches of 16 and 4
    EXPECT_EQ(s.pos(), 20u);
    EXPECT_GT(runs.prefill(20, 16), 0) << shape;
    EXPECT_EQ(s.pos(), 36u);
    runs.to_depth(10);  // kept: the cache already holds the first 10 positions
    EXPECT_EQ(s.pos(), 10u);
    size_t calls = 0, bytes = 0, expected = 0;
    const ReadPass read = [&](ThreadPool&, const uint8_t* const*, const size_t* sizes, size_t count) {
      ++calls;
      for (size_t i = 0; i < count; ++i) bytes += sizes[i];
      return 1e-3;
    };
    const BenchRuns::Decode d = runs.decode(10, 5, read);
    EXPECT_EQ(s.pos(), 15u);
    EXPECT_EQ(calls, 5u);
    ASSERT_EQ(d.paired.size(), 5u);
    ASSERT_EQ(d.read_gbs.size(), 5u);
    EXPECT_GT(d.tokens_per_s, 0);
    // The last token's read: its weights (the experts it chose) and its KV spans, whole lines.
    std::vector<const PackedWeights*> ws;
    decode_weights(model, s, ws);
    for (const PackedWeights* w : ws) expected += w->bytes();
    EXPECT_GE(bytes, expected) << shape;
    EXPECT_EQ(runs.decode(10, 3, nullptr).paired.size(), 0u);  // no read pass: no pairs
    EXPECT_GT(runs.prefill_decode(0, 8, 4), 0);
    EXPECT_EQ(s.pos(), 12u);
    EXPECT_DOUBLE_EQ(runs.kv_read_per_token(10, 2), (static_cast<double>(s.kv_bytes_read(10)) + s.kv_bytes_read(11)) / 2);
  }
}

}  // namespace
}  // namespace qmm::llm
