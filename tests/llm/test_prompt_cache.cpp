// The prompt cache across requests (prompt_cache.h) and slot files (slot_file.h): a request
// starts from the longest prefix any earlier request left, never from another conversation's
// cache where any token differs (not even when every hash collides), greedy output is the same
// with and without the cache for every KV type, the budget is never exceeded, eviction is least
// recently used (leaves first), and slot files read back are checked as hostile input.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "../emulated.h"
#include "core/error.h"
#include "llm/generate.h"
#include "llm/prompt_cache.h"
#include "llm/slot_file.h"
#include "llm/synth.h"

namespace qmm::llm {
namespace {

std::string synth(const char* shape, uint64_t seed = 3) {
  const std::string path = ::testing::TempDir() + "pc_" + shape + "_" + std::to_string(seed) + ".gguf";
  if (!std::filesystem::exists(path)) gguf::synth_model(*gguf::find_synth_shape(shape), WeightType::q8_0, seed, path, 1);
  return path;
}

std::vector<int32_t> tokens(size_t n, uint32_t seed) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>(10 + (seed * 7919u + i * 104729u) % 500u);
  return t;
}

std::vector<int32_t> cat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct Loaded {
  Context ctx{1};
  Model model;
  Tokenizer tok;
  explicit Loaded(const std::string& path) : model(Model::load(path, load_options(), ctx.pool())), tok(Tokenizer::from_gguf(model.file())) {}
  // Cached and uncached runs prefill in batches of other sizes: the AMX-BF16 GEMMs (from 64
  // rows) round differently from the int8 GEMMs below them, which flips greedy tokens of these
  // random tiny models. One arithmetic for every batch size keeps the comparisons exact.
  static LoadOptions load_options() {
    LoadOptions o;
    o.filter = parse_kernel_filter("", "amxbf16");
    return o;
  }
};

Loaded& tiny_k() {
  static Loaded L(synth("tiny-k"));
  return L;
}

struct Out {
  std::vector<int32_t> tokens;
  Result res;
};

// Runs `prompt` greedily for `n` tokens on g and returns what it generated.
Out generate(Generator& g, const std::vector<int32_t>& prompt, size_t n = 8) {
  Out out;
  Request r;
  r.prompt = prompt;
  r.params.sampling.temperature = 0;
  r.params.max_tokens = n;
  r.params.ignore_eos = true;
  r.on_token = [&out](const Piece& p) {
    if (p.token >= 0) out.tokens.push_back(p.token);
    return true;
  };
  r.on_done = [&out](const Result& res) { out.res = res; };
  g.submit(std::move(r));
  g.run();
  return out;
}

GeneratorOptions options(KvTypes kv, size_t cache_bytes, size_t slots = 1) {
  GeneratorOptions o;
  o.n_slots = slots;
  o.n_ctx = 512;
  o.n_batch = 48;  // prompts prefilled in chunks that do not line up with the cache's blocks
  o.kv = kv;
  o.cache_bytes = cache_bytes;
  return o;
}

constexpr KvTypes kAllTypes[] = {{KvType::f32, KvType::f32}, {KvType::f16, KvType::f16}, {KvType::q8_0, KvType::q8_0},
                                 {KvType::q4_0, KvType::q4_0}, {KvType::q8_0, KvType::f16}};

// A conversation with a 200-token system prompt; another prompt takes the only slot; a new
// conversation with the same system prompt starts from the cache (192 tokens: 3 blocks) and
// generates what it generates without a cache.
TEST(PromptCache, GreedyOutputIsTheSameWithAndWithoutTheCacheForEveryKvType) {
  if (test::emulated()) GTEST_SKIP() << test::kTooSlowEmulated;
  Loaded& L = tiny_k();
  const auto sys = tokens(200, 1);
  for (KvTypes kv : kAllTypes) {
    SCOPED_TRACE(std::string(kv_type_name(kv.k)) + "/" + kv_type_name(kv.v));
    Generator cached(L.model, L.tok, L.ctx, options(kv, 64 << 20));
    Generator plain(L.model, L.tok, L.ctx, options(kv, 0));
    ASSERT_TRUE(cached.cache_off_reason().empty());
    generate(cached, cat(sys, tokens(30, 2)));
    const Out other = generate(cached, tokens(100, 9));  // the slot now holds another conversation
    EXPECT_EQ(other.res.cached_tokens, 0u);
    const auto next = cat(sys, tokens(40, 3));
    const Out with = generate(cached, next, 16);
    const Out without = generate(plain, next, 16);
    EXPECT_EQ(with.res.cached_tokens, 192u);
    EXPECT_EQ(without.res.cached_tokens, 0u);
    EXPECT_EQ(with.tokens, without.tokens);
    EXPECT_EQ(cached.counters().cached_tokens, 192u);
    EXPECT_EQ(cached.counters().prompt_tokens, 230u + 100u + 240u);
  }
}

// Sliding-window layers whose cache is not a ring that wraps (the context fits window + batch):
// the cache works there too, and the answers are the same.
TEST(PromptCache, WindowedLayersWithoutAWrappingRing) {
  Loaded L(synth("tiny-gemma3"));
  const auto sys = tokens(200, 1);
  for (KvTypes kv : {KvTypes{}, KvTypes{KvType::q8_0, KvType::q8_0}}) {
    GeneratorOptions o = options(kv, 64 << 20);
    o.n_batch = 512;  // the ring holds window + batch - 1 >= n_ctx positions
    Generator cached(L.model, L.tok, L.ctx, o);
    ASSERT_TRUE(cached.cache_off_reason().empty());
    o.cache_bytes = 0;
    Generator plain(L.model, L.tok, L.ctx, o);
    generate(cached, cat(sys, tokens(30, 2)));
    generate(cached, tokens(100, 9));
    const auto next = cat(sys, tokens(40, 3));
    const Out with = generate(cached, next, 16);
    EXPECT_EQ(with.res.cached_tokens, 192u);
    EXPECT_EQ(with.tokens, generate(plain, next, 16).tokens);
  }
}

// A request whose prompt differs from a cached conversation in one token gets only the blocks
// before that token, whichever it is, and the output it would get without any cache.
TEST(PromptCache, NeverServesAPrefixThatDiffersInAnyToken) {
  if (test::emulated()) GTEST_SKIP() << test::kTooSlowEmulated;
  Loaded& L = tiny_k();
  const auto a = tokens(300, 4);
  for (size_t j : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{127}, size_t{130}, size_t{255}, size_t{256}, size_t{299}}) {
    SCOPED_TRACE("token " + std::to_string(j) + " differs");
    Generator cached(L.model, L.tok, L.ctx, options({}, 64 << 20));
    Generator plain(L.model, L.tok, L.ctx, options({}, 0));
    generate(cached, a);
    generate(cached, tokens(100, 9));  // the slot no longer holds `a`: only the prompt cache does
    auto b = a;
    b[j] = b[j] == 20 ? 21 : 20;
    const Out with = generate(cached, b, 12);
    EXPECT_EQ(with.res.cached_tokens, j / 64 * 64);
    EXPECT_EQ(with.tokens, generate(plain, b, 12).tokens);
  }
}

// Four slots, conversations sharing a system prompt arriving while others decode (prefills in
// chunks beside decoding rows, cache blocks restored into whichever slot is free): every answer
// is the one a generator without a cache gives it alone.
TEST(PromptCache, BatchedConversationsGetTheirOwnAnswers) {
  if (test::emulated()) GTEST_SKIP() << test::kTooSlowEmulated;
  Loaded& L = tiny_k();
  const auto sys = tokens(150, 1);
  std::vector<std::vector<int32_t>> prompts;
  for (uint32_t i = 0; i < 10; ++i) prompts.push_back(i % 3 == 2 ? tokens(90 + i, 50 + i) : cat(sys, tokens(5 + 7 * i, 20 + i)));
  std::vector<std::vector<int32_t>> alone;
  for (const auto& p : prompts) {
    Generator plain(L.model, L.tok, L.ctx, options({}, 0));
    alone.push_back(generate(plain, p, 6 + prompts.size() % 5).tokens);
  }
  Generator g(L.model, L.tok, L.ctx, options({}, 64 << 20, 4));
  std::vector<Out> outs(prompts.size());
  size_t next = 0;
  auto submit = [&](size_t i) {
    Request r;
    r.prompt = prompts[i];
    r.params.sampling.temperature = 0;
    r.params.max_tokens = 6 + prompts.size() % 5;
    r.params.ignore_eos = true;
    r.on_token = [&outs, i](const Piece& p) {
      if (p.token >= 0) outs[i].tokens.push_back(p.token);
      return true;
    };
    r.on_done = [&outs, i](const Result& res) { outs[i].res = res; };
    g.submit(std::move(r));
  };
  submit(next++);
  while (g.step()) {
    if (next < prompts.size()) submit(next++);  // one more each step, beside those decoding
  }
  size_t from_cache = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(outs[i].tokens, alone[i]) << i;
    from_cache += outs[i].res.cached_tokens;
  }
  EXPECT_GT(from_cache, 0u);
}

// Every key collides: lookups must still compare the tokens and the parent block.
uint64_t collide(uint64_t, const int32_t*, size_t) { return 42; }

TEST(PromptCache, AHashIsNeverTrustedAlone) {
  Loaded& L = tiny_k();
  State s(L.model, 512, 64, L.ctx, 1);
  PromptCache cache(64 << 20, s.kv_copy_bytes(64), 64, &collide);
  const auto a = tokens(256, 5);
  for (size_t p = 0; p < a.size(); p += 64) forward(L.model, s, a.data() + p, 64);
  cache.store(s, 0, a);
  EXPECT_EQ(cache.blocks(), 4u);
  EXPECT_EQ(cache.match(a), 256u);
  auto b = a;
  b[70] = 11;
  EXPECT_EQ(cache.match(b), 64u);
  // The same block after another parent is not a match either.
  std::vector<int32_t> c(a.begin() + 64, a.end());
  EXPECT_EQ(cache.match(c), 0u);
  const std::vector<int32_t> twice = cat(std::vector<int32_t>(a.begin(), a.begin() + 64), std::vector<int32_t>(a.begin(), a.begin() + 64));
  EXPECT_EQ(cache.match(twice), 64u);
}

// Blocks in a budget of four entries: the least recently used leaf goes first, parents after
// their children, and a prefix that was used again stays.
TEST(PromptCache, EvictsTheLeastRecentlyUsedLeafFirst) {
  Loaded& L = tiny_k();
  State s(L.model, 512, 64, L.ctx, 1);
  const size_t entry = PromptCache(1, s.kv_copy_bytes(64)).entry_bytes();
  PromptCache cache(4 * entry, s.kv_copy_bytes(64));
  auto fill = [&](const std::vector<int32_t>& t) {
    s.truncate(0, 0);
    for (size_t p = 0; p < t.size(); p += 64) forward(L.model, s, t.data() + p, 64);
  };
  const auto a = tokens(128, 6), b = tokens(128, 7), c = tokens(64, 8), d = tokens(64, 9);
  fill(a);
  cache.store(s, 0, a);
  fill(b);
  cache.store(s, 0, b);
  EXPECT_EQ(cache.blocks(), 4u);
  s.truncate(0, 0);
  EXPECT_EQ(cache.restore(s, 0, a, 0, a.size()), 128u);  // a is used again
  fill(c);
  cache.store(s, 0, c);  // b's second block goes (the oldest leaf), not b's first (its parent)
  EXPECT_EQ(cache.match(a), 128u);
  EXPECT_EQ(cache.match(b), 64u);
  EXPECT_EQ(cache.match(c), 64u);
  fill(d);
  cache.store(s, 0, d);  // then b's first block
  EXPECT_EQ(cache.match(b), 0u);
  EXPECT_EQ(cache.match(a), 128u);
  EXPECT_EQ(cache.match(c), 64u);
  EXPECT_EQ(cache.match(d), 64u);
  EXPECT_LE(cache.bytes(), cache.budget());
}

// Random conversations through a generator whose cache holds a few blocks: the bytes never
// exceed the budget, and every answer is the one without a cache.
TEST(PromptCache, NeverExceedsItsBudget) {
  if (test::emulated()) GTEST_SKIP() << test::kTooSlowEmulated;
  Loaded& L = tiny_k();
  State probe(L.model, 512, 64, L.ctx, 1);
  const size_t entry = PromptCache(1, probe.kv_copy_bytes(64)).entry_bytes();
  std::mt19937 rng(1);
  for (size_t budget : {entry / 2, entry, 3 * entry + entry / 2, 7 * entry}) {
    Generator cached(L.model, L.tok, L.ctx, options({}, budget, 2));
    Generator plain(L.model, L.tok, L.ctx, options({}, 0));
    for (int i = 0; i < 12; ++i) {
      const auto prompt = cat(tokens(64 * (rng() % 3), static_cast<uint32_t>(rng() % 3)), tokens(20 + rng() % 100, static_cast<uint32_t>(100 + i)));
      const Out with = generate(cached, prompt, 4);
      EXPECT_EQ(with.tokens, generate(plain, prompt, 4).tokens) << i;
      const GeneratorCounters c = cached.counters();
      ASSERT_LE(c.cache_bytes, budget) << i;
      EXPECT_EQ(c.cache_bytes, c.cache_blocks * entry);
      EXPECT_EQ(c.cache_budget, budget);
    }
  }
}

TEST(PromptCache, IsRefusedWithAReasonForSlidingWindowRings) {
  Loaded L(synth("tiny-gemma3"));
  Generator g(L.model, L.tok, L.ctx, options({}, 64 << 20));  // window 8: the local layers' caches are rings
  EXPECT_NE(g.cache_off_reason().find("sliding-window"), std::string::npos) << g.cache_off_reason();
  EXPECT_EQ(g.counters().cache_budget, 0u);
  generate(g, tokens(100, 1), 2);
  EXPECT_THROW(g.save_slot(0, ::testing::TempDir() + "ring.slot"), Error);
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

void write_all(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A slot saved by one generator and restored by another continues as the first would.
TEST(SlotFile, SaveThenRestoreContinuesTheConversation) {
  Loaded& L = tiny_k();
  const std::string path = ::testing::TempDir() + "pc_roundtrip.slot";
  for (KvTypes kv : kAllTypes) {
    SCOPED_TRACE(std::string(kv_type_name(kv.k)) + "/" + kv_type_name(kv.v));
    Generator a(L.model, L.tok, L.ctx, options(kv, 0, 2));
    generate(a, tokens(150, 1), 10);
    const std::vector<int32_t> held = a.cached(0);
    ASSERT_EQ(held.size(), 159u);
    const size_t written = a.save_slot(0, path);
    EXPECT_EQ(written, std::filesystem::file_size(path));
    Generator b(L.model, L.tok, L.ctx, options(kv, 0, 2));
    EXPECT_EQ(b.restore_slot(1, path), written);
    EXPECT_EQ(b.cached(1), held);
    const auto next = cat(held, tokens(20, 2));
    Request r;  // on the restored slot
    Out with;
    r.prompt = next;
    r.slot = 1;
    r.params.sampling.temperature = 0;
    r.params.max_tokens = 12;
    r.params.ignore_eos = true;
    r.on_token = [&with](const Piece& p) {
      if (p.token >= 0) with.tokens.push_back(p.token);
      return true;
    };
    r.on_done = [&with](const Result& res) { with.res = res; };
    b.submit(std::move(r));
    b.run();
    EXPECT_EQ(with.res.cached_tokens, held.size());
    Generator plain(L.model, L.tok, L.ctx, options(kv, 0));
    EXPECT_EQ(with.tokens, generate(plain, next, 12).tokens);
    EXPECT_EQ(b.erase_slot(1), next.size() + 11);
    EXPECT_TRUE(b.cached(1).empty());
  }
}

// Files that are not ours, truncated, of another model or cache type, or lying in their
// header: a one-line error naming the file, and the slot is left empty and usable.
TEST(SlotFile, HostileFilesAreCleanErrors) {
  Loaded& L = tiny_k();
  const std::string dir = ::testing::TempDir(), good = dir + "pc_good.slot", bad = dir + "pc_bad.slot";
  Generator a(L.model, L.tok, L.ctx, options({}, 0));
  generate(a, tokens(100, 1), 4);
  a.save_slot(0, good);
  const std::vector<uint8_t> bytes = read_all(good);
  auto expect_refused = [&](const std::vector<uint8_t>& file, const std::string& why, KvTypes kv = {}) {
    write_all(bad, file);
    Generator b(L.model, L.tok, L.ctx, options(kv, 0));
    generate(b, tokens(90, 5), 2);
    try {
      b.restore_slot(0, bad);
      ADD_FAILURE() << "accepted: " << why;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
    EXPECT_TRUE(b.cached(0).empty());
    EXPECT_EQ(generate(b, tokens(90, 5), 2).res.cached_tokens, 0u);
  };
  expect_refused({}, "too short");
  expect_refused(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 20), "too short");
  expect_refused(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1), "its header says");
  auto longer = bytes;
  longer.push_back(0);
  expect_refused(longer, "its header says");
  std::vector<uint8_t> junk(bytes.size());
  std::mt19937 rng(3);
  for (uint8_t& x : junk) x = static_cast<uint8_t>(rng());
  expect_refused(junk, "not a qmm slot file");
  expect_refused(read_all(synth("tiny-k", 4)), "not a qmm slot file");  // a GGUF
  auto version = bytes;
  version[8] = 9;
  expect_refused(version, "version 9");
  expect_refused(bytes, "another KV cache type", {KvType::q8_0, KvType::f16});
  auto huge = bytes;  // n_tokens at offset 24: 2^62 must not be allocated
  huge[31] = 0x40;
  expect_refused(huge, "tokens, a slot holds");
  auto zero = bytes;
  std::fill(zero.begin() + 24, zero.begin() + 32, 0);
  expect_refused(zero, "0 tokens");
  auto token = bytes;
  token[32 + 3] = 0x7f;  // the first token
  expect_refused(token, "outside the vocabulary");
  {
    Loaded other(synth("tiny-k", 4));  // same shape, other weights
    Generator b(other.model, other.tok, other.ctx, options({}, 0));
    EXPECT_THROW(b.restore_slot(0, good), Error);
    Generator c(L.model, L.tok, L.ctx, [] { auto o = options({}, 0); o.n_ctx = 256; return o; }());
    EXPECT_NO_THROW(c.restore_slot(0, good));  // another context size, same RoPE: fine
  }
  Generator b(L.model, L.tok, L.ctx, options({}, 0));
  EXPECT_THROW(b.restore_slot(0, dir + "pc_missing.slot"), Error);
  EXPECT_THROW(b.restore_slot(0, dir), Error);  // a directory
  const std::string fifo = dir + "pc_fifo.slot";
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  try {
    b.restore_slot(0, fifo);  // (no writer: a blocking open would wait forever)
    ADD_FAILURE() << "a FIFO was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  std::filesystem::remove(fifo);
  EXPECT_THROW(b.save_slot(0, bad), Error);     // an empty slot
}

TEST(SlotFile, ABusySlotIsRefused) {
  Loaded& L = tiny_k();
  Generator g(L.model, L.tok, L.ctx, options({}, 0));
  Request r;
  r.prompt = tokens(50, 1);
  r.params.max_tokens = 100;
  g.submit(std::move(r));
  g.step();
  ASSERT_TRUE(g.busy(0));
  EXPECT_EQ(g.task(0), 1u);
  for (auto f : {+[](Generator& x) { x.save_slot(0, ::testing::TempDir() + "pc_busy.slot"); },
                 +[](Generator& x) { x.restore_slot(0, ::testing::TempDir() + "pc_busy.slot"); },
                 +[](Generator& x) { x.erase_slot(0); }}) {
    try {
      f(g);
      ADD_FAILURE() << "a busy slot was changed";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::unsupported);
    }
  }
  EXPECT_THROW(g.erase_slot(1), Error);
  g.cancel_all();
}

// The engine thread runs slot calls between steps, and rethrows their errors to the caller.
TEST(SlotFile, GeneratorThreadCallsRunOnTheEngine) {
  Loaded& L = tiny_k();
  GeneratorThread t(L.model, L.tok, L.ctx, options({}, 1 << 20));
  size_t n = 1;
  t.call([&](Generator& g) { n = g.cached(0).size(); });
  EXPECT_EQ(n, 0u);
  EXPECT_THROW(t.call([](Generator& g) { g.erase_slot(5); }), Error);
  EXPECT_EQ(t.counters().cache_budget, size_t{1} << 20);
}

}  // namespace
}  // namespace qmm::llm
