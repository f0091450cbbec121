// The pack cache (llm/pack_cache.h) and the tuner at model load (matmul/tune.h): a cached or
// tuned load computes the same bits as a plain one; a changed GGUF, a damaged, foreign or
// hostile cache file is rebuilt, never trusted; concurrent writers and an unwritable cache
// directory are harmless. Timing never decides anything here (the tuner's timer is injected).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "llm/model.h"
#include "llm/pack_cache.h"
#include "llm/synth.h"
#include "matmul/select.h"
#include "../temp_dirs.h"

namespace qmm::llm {
namespace {

std::string temp_dir() {
  const std::string t = test::temp_dir("qmm_pack");
  EXPECT_NE(t, "");
  return t;
}

// A synthetic model of the "tiny" shape in `target` (a K-quant mix included).
std::string synth(const std::string& dir, const gguf::QuantTarget& target, uint64_t seed = 7) {
  const std::string path = dir + "/model.gguf";
  gguf::synth_model(*gguf::find_synth_shape("tiny"), target, seed, path, 1);
  return path;
}

// SME2 weights are never cached (their layout depends on the SVL): where the GEMMs of these
// models are SME2 (the Arm build under qemu), the tests below have nothing to check.
bool sme2_weights() {
  for (WeightType t : {WeightType::q4_0, WeightType::q4_k, WeightType::q6_k}) {
    const KernelPair k = select_kernels(t, {}, cpu_info());
    if (k.gemm && k.gemm->isa == Isa::sme2) return true;
  }
  return false;
}
constexpr const char* kSme2NotCached = "SME2 weights are not cached (their layout depends on the SVL)";

LoadOptions cached(const std::string& dir, std::vector<std::string>* warnings = nullptr) {
  LoadOptions o;
  o.pack_cache = dir;
  o.pack_cache_min_bytes = 0;
  if (warnings) o.warn = [warnings](const std::string& m) { warnings->push_back(m); };
  return o;
}

// Greedy tokens from token 1, and every logit of every step (bits compared).
struct Decoded {
  std::vector<int32_t> tokens;
  std::vector<float> logits;
  LoadStats stats;
};

Decoded greedy(const std::string& path, const LoadOptions& opt, int threads = 2, size_t steps = 12) {
  Context ctx(threads);
  const Model m = Model::load(path, opt, ctx.pool());
  State s(m, 64, 16, ctx);
  Decoded r;
  r.stats = m.stats();
  int32_t tok = 1;
  const std::vector<int32_t> prompt = {1, 5, 9, 13, 2};  // a batch first (the GEMM), then decode (the GEMV)
  const float* logits = forward(m, s, prompt.data(), prompt.size());
  for (size_t i = 0; i < steps; ++i) {
    const size_t nv = m.config().n_vocab;
    r.logits.insert(r.logits.end(), logits, logits + nv);
    tok = static_cast<int32_t>(std::max_element(logits, logits + nv) - logits);
    r.tokens.push_back(tok);
    logits = forward(m, s, &tok, 1);
  }
  return r;
}

void expect_same(const Decoded& a, const Decoded& b, const std::string& what) {
  EXPECT_EQ(a.tokens, b.tokens) << what;
  ASSERT_EQ(a.logits.size(), b.logits.size()) << what;
  EXPECT_EQ(0, std::memcmp(a.logits.data(), b.logits.data(), a.logits.size() * sizeof(float))) << what;
}

std::vector<std::string> pack_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".qpk") out.push_back(e.path().string());
  }
  return out;
}

TEST(PackCache, SecondLoadIsMappedAndComputesTheSameBits) {
  if (sme2_weights()) GTEST_SKIP() << kSme2NotCached;
  for (const gguf::QuantTarget& target : {gguf::QuantTarget(WeightType::q4_0), [] {
         gguf::QuantTarget t(WeightType::q4_k);
         t.k_m = true;
         return t;
       }()}) {
    const std::string dir = temp_dir();
    const std::string model = synth(dir, target);
    const Decoded plain = greedy(model, {});
    const Decoded first = greedy(model, cached(dir + "/packs"));
    EXPECT_FALSE(first.stats.from_pack_cache);
    ASSERT_EQ(pack_files(dir + "/packs").size(), 1u);
    const Decoded second = greedy(model, cached(dir + "/packs"));
    EXPECT_TRUE(second.stats.from_pack_cache);
    expect_same(plain, first, "first (written) load");
    expect_same(plain, second, "mapped load");
    const Decoded one_thread = greedy(model, cached(dir + "/packs"), 1);
    EXPECT_TRUE(one_thread.stats.from_pack_cache);
    expect_same(plain, one_thread, "mapped, 1 thread");
  }
}

TEST(PackCache, ChangedModelIsRepacked) {
  if (sme2_weights()) GTEST_SKIP() << kSme2NotCached;
  const std::string dir = temp_dir();
  const std::string model = synth(dir, WeightType::q8_0, 1);
  greedy(model, cached(dir + "/packs"));
  // Same shape and size, other weights, newer mtime: the old pack must not be used.
  synth(dir, WeightType::q8_0, 2);
  const struct timespec ts[2] = {{0, UTIME_OMIT}, {1234567890, 0}};  // (a rewrite within one clock tick keeps the mtime)
  ASSERT_EQ(0, ::utimensat(AT_FDCWD, model.c_str(), ts, 0));
  const Decoded plain = greedy(model, {});
  const Decoded again = greedy(model, cached(dir + "/packs"));
  EXPECT_FALSE(again.stats.from_pack_cache);
  expect_same(plain, again, "changed GGUF");
  EXPECT_TRUE(greedy(model, cached(dir + "/packs")).stats.from_pack_cache);
}

// Another build of qmm does not trust the file, and replaces it rather than adding one beside
// it (a pack file is as large as the model).
TEST(PackCache, AnotherBuildReplacesTheFile) {
  if (sme2_weights()) GTEST_SKIP() << kSme2NotCached;
  const std::string dir = temp_dir();
  const std::string model = synth(dir, WeightType::q4_0);
  greedy(model, cached(dir + "/packs"));
  build_id_override() = "qmm 0.0.0 another build";
  const Decoded other = greedy(model, cached(dir + "/packs"));
  build_id_override().clear();
  EXPECT_FALSE(other.stats.from_pack_cache);
  EXPECT_EQ(pack_files(dir + "/packs").size(), 1u);
}

// A damaged file is detected (never used) and rewritten by the load that found it.
TEST(PackCache, DamagedFilesAreRebuilt) {
  if (sme2_weights()) GTEST_SKIP() << kSme2NotCached;
  const std::string dir = temp_dir();
  const std::string model = synth(dir, WeightType::q4_0);
  const Decoded plain = greedy(model, {});
  greedy(model, cached(dir + "/packs"));
  const std::string file = pack_files(dir + "/packs").at(0);
  std::string good;
  {
    std::ifstream in(file, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto damaged = [&](const std::string& what, std::string bytes) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    const Decoded r = greedy(model, cached(dir + "/packs"));
    EXPECT_FALSE(r.stats.from_pack_cache) << what;
    expect_same(plain, r, what);
    EXPECT_TRUE(greedy(model, cached(dir + "/packs")).stats.from_pack_cache) << what << ": not rewritten";
  };
  damaged("truncated", good.substr(0, good.size() - 1));
  damaged("truncated to the header", good.substr(0, 40));
  damaged("empty", "");
  damaged("one byte longer", good + "x");
  for (size_t at : {size_t{0}, size_t{9}, size_t{13}, size_t{17}, size_t{25}, size_t{40}, size_t{200}, good.find("kernels") + 9}) {
    std::string flipped = good;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x20);
    damaged("byte " + std::to_string(at) + " flipped", flipped);
  }
  // An entry's offset or size pointing outside the file, with the checksum made to match.
  const size_t key_len = static_cast<uint32_t>(good[12] & 0xff) | (static_cast<uint32_t>(good[13] & 0xff) << 8);
  for (size_t field : {size_t{24}, size_t{32}}) {  // RawEntry::offset, ::bytes of entry 0
    std::string hostile = good;
    const uint64_t huge = ~uint64_t{0} - 4095;
    std::memcpy(hostile.data() + 32 + key_len + field, &huge, 8);
    uint64_t n = 0;
    std::memcpy(&n, good.data() + 16, 8);
    const uint64_t sum = fnv1a(hostile.data() + 32, key_len + 176 * n);
    std::memcpy(hostile.data() + 24, &sum, 8);
    damaged("hostile entry field " + std::to_string(field), hostile);
  }
  damaged("random bytes", std::string(good.size(), '\x5a'));
}

TEST(PackCache, ConcurrentWritersLeaveOneGoodFile) {
  if (sme2_weights()) GTEST_SKIP() << kSme2NotCached;
  const std::string dir = temp_dir();
  const std::string model = synth(dir, WeightType::q4_0);
  const Decoded plain = greedy(model, {});
  std::vector<Decoded> runs(4);
  std::vector<std::thread> th;
  for (size_t i = 0; i < runs.size(); ++i) th.emplace_back([&, i] { runs[i] = greedy(model, cached(dir + "/packs"), 1); });
  for (std::thread& t : th) t.join();
  for (const Decoded& r : runs) expect_same(plain, r, "concurrent load");
  ASSERT_EQ(pack_files(dir + "/packs").size(), 1u);  // no temporaries left over
  size_t others = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/packs")) others += e.path().extension() != ".qpk";
  EXPECT_EQ(others, 0u);
  const Decoded after = greedy(model, cached(dir + "/packs"));
  EXPECT_TRUE(after.stats.from_pack_cache);
  expect_same(plain, after, "after concurrent writers");
}

TEST(PackCache, UnwritableDirectoryLoadsAndWarns) {
  const std::string dir = temp_dir();
  const std::string model = synth(dir, WeightType::q4_0);
  std::ofstream(dir + "/file") << "not a directory";
  std::vector<std::string> warnings;
  const Decoded plain = greedy(model, {});
  for (int i = 0; i < 2; ++i) {
    const Decoded r = greedy(model, cached(dir + "/file/packs", &warnings));
    EXPECT_FALSE(r.stats.from_pack_cache);
    expect_same(plain, r, "unwritable cache");
  }
  EXPECT_LE(warnings.size(), 1u);  // once per process
}

// A tuned load (the timer injected so that the non-default plans win) decodes the same tokens
// and the same logits as an untuned one, and a pack-cached tuned one too.
TEST(PackCache, TunedRunGivesTheSameGreedyOutput) {
  if (sme2_weights()) GTEST_SKIP() << kSme2NotCached;
  const std::string dir = temp_dir();
  const std::string model = synth(dir, WeightType::q4_0);
  const Decoded plain = greedy(model, {});
  LoadOptions opt = cached(dir + "/packs");
  opt.tune = TuneOptions{};
  opt.tune->cache_dir = dir + "/tune";
  int calls = 0;
  opt.tune->timer = [&calls](const PackedWeights& w, const DecodePlan& p) {
    ++calls;
    return (p.chunk_bytes == DecodePlan::kDefaultChunkBytes ? 1.0 : 0.5) * static_cast<double>(w.bytes());
  };
  const Decoded tuned = greedy(model, opt);
  EXPECT_GT(calls, 0);
  expect_same(plain, tuned, "tuned");
  Context ctx(2);
  const Model m = Model::load(model, opt, ctx.pool());
  EXPECT_TRUE(m.stats().from_pack_cache);
  for (const TuneClass& c : m.tuning().classes) {
    EXPECT_TRUE(c.from_cache);
    EXPECT_NE(c.chosen.chunk_bytes, DecodePlan::kDefaultChunkBytes);
  }
  for (const PackedWeights* w : m.weights()) EXPECT_NE(w->chunk_bytes(), DecodePlan::kDefaultChunkBytes);
  expect_same(plain, greedy(model, opt), "tuned, from both caches");
}

}  // namespace
}  // namespace qmm::llm
