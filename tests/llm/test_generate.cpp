// The batched generator: a greedy sequence gives the same tokens alone (m = 1) or beside up to
// 7 others (m = 2..8, prompts prefilled in chunks while others decode), on stories260K and on a
// synthetic Llama-3 Q4_0 model; stop conditions, cancellation, KV prefix reuse across requests,
// bad requests, and the engine thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <thread>

#include "core/error.h"
#include "llm/generate.h"
#include "llm/synth.h"
#include "test_models.h"

namespace qmm::llm {
namespace {

struct Out {
  std::vector<int32_t> tokens;
  std::string text;
  Result res;
};

GenerateParams greedy(size_t max_tokens) {
  GenerateParams p;
  p.sampling.temperature = 0;
  p.max_tokens = max_tokens;
  return p;
}

Request request(const std::vector<int32_t>& prompt, const GenerateParams& p, Out* out) {
  Request r;
  r.prompt = prompt;
  r.params = p;
  r.on_token = [out](const Piece& piece) {
    if (piece.token >= 0) out->tokens.push_back(piece.token);
    out->text += piece.text;
    return true;
  };
  r.on_done = [out](const Result& res) { out->res = res; };
  return r;
}

struct Loaded {
  Context ctx{1};
  Model model;
  Tokenizer tok;
  explicit Loaded(const std::string& path, const LoadOptions& opt = {})
      : model(Model::load(path, opt, ctx.pool())), tok(Tokenizer::from_gguf(model.file())) {}
};

// Each prompt alone, then all together: submitted in two waves (so later prompts are prefilled
// in chunks of 3 while the first ones decode), with different lengths (so m shrinks as they
// finish). Every sequence's tokens must be the same.
void expect_batch_equals_alone(Loaded& L, const std::vector<std::string>& prompts, size_t base_len) {
  std::vector<std::vector<int32_t>> enc;
  for (const std::string& p : prompts) enc.push_back(L.tok.encode(p, true));
  std::vector<Out> alone(prompts.size()), together(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    Generator g(L.model, L.tok, L.ctx, {1, 128, 3, 64});
    g.submit(request(enc[i], greedy(base_len + i), &alone[i]));
    g.run();
    ASSERT_EQ(alone[i].res.reason, FinishReason::length) << i;
    ASSERT_EQ(alone[i].tokens.size(), base_len + i);
  }
  Generator g(L.model, L.tok, L.ctx, {prompts.size(), 128, 3, 64});
  const size_t half = prompts.size() / 2;
  for (size_t i = 0; i < half; ++i) g.submit(request(enc[i], greedy(base_len + i), &together[i]));
  for (int s = 0; s < 4; ++s) g.step();
  for (size_t i = half; i < prompts.size(); ++i) g.submit(request(enc[i], greedy(base_len + i), &together[i]));
  size_t max_m = 0;
  set_matmul_trace([](void* m, const PackedWeights&, size_t rows, double) { *static_cast<size_t*>(m) = std::max(*static_cast<size_t*>(m), rows); },
                   &max_m);
  g.run();
  set_matmul_trace(nullptr, nullptr);
  EXPECT_GE(max_m, prompts.size());  // every sequence decoded in one matmul (+ a prefill chunk)
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(together[i].tokens, alone[i].tokens) << "prompt " << i;
    EXPECT_EQ(together[i].text, alone[i].text) << "prompt " << i;
    EXPECT_EQ(together[i].res.reason, FinishReason::length);
  }
}

const std::vector<std::string> kPrompts = {"Once upon a time", "The cat", "Lily and Tom went to the park", "One day",
                                           "There was a big dog named Max", "Sue", "The sun was hot and the",
                                           "A little bird"};

TEST(Generate, Stories260KGreedyBatchOf8EqualsAlone) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  expect_batch_equals_alone(L, kPrompts, 24);
}

TEST(Generate, SynthLlama3Q4_0GreedyBatchOf8EqualsAlone) {
  const std::string path = ::testing::TempDir() + "gen_tiny_llama3_q4_0.gguf";
  gguf::synth_model(*gguf::find_synth_shape("tiny-llama3"), WeightType::q4_0, 11, path, 1);
  Loaded L(path);
  expect_batch_equals_alone(L, kPrompts, 24);
}

TEST(Generate, StopStringsAreCutAndHeldBack) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  const std::vector<int32_t> prompt = L.tok.encode("Once upon a time", true);
  Out full;
  Generator g(L.model, L.tok, L.ctx, {});
  g.submit(request(prompt, greedy(40), &full));
  g.run();
  const size_t at = full.text.find("little");
  ASSERT_NE(at, std::string::npos) << full.text;
  Out cut;
  GenerateParams p = greedy(40);
  p.stop = {"zzz", "little"};
  g.submit(request(prompt, p, &cut));
  g.run();
  EXPECT_EQ(cut.res.reason, FinishReason::stop);
  EXPECT_EQ(cut.text, full.text.substr(0, at));
  EXPECT_LT(cut.res.generated, full.res.generated);
}

TEST(Generate, StopTokensEndTheReplyUnprinted) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  const std::vector<int32_t> prompt = L.tok.encode("Once upon a time", true);
  Generator g(L.model, L.tok, L.ctx, {});
  Out full, cut;
  g.submit(request(prompt, greedy(12), &full));
  g.run();
  ASSERT_EQ(full.tokens.size(), 12u);
  GenerateParams p = greedy(12);
  p.stop_tokens = {full.tokens[5]};  // an end-of-turn token, as chat templates have
  g.submit(request(prompt, p, &cut));
  g.run();
  EXPECT_EQ(cut.res.reason, FinishReason::stop);
  const size_t first = static_cast<size_t>(std::find(full.tokens.begin(), full.tokens.end(), full.tokens[5]) - full.tokens.begin());
  EXPECT_EQ(cut.tokens, std::vector<int32_t>(full.tokens.begin(), full.tokens.begin() + static_cast<std::ptrdiff_t>(first)));
  EXPECT_EQ(cut.res.generated, first);
  EXPECT_EQ(full.text.substr(0, cut.text.size()), cut.text);
}

TEST(Generate, CancelFinishesQueuedAndRunningRequests) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  const std::vector<int32_t> prompt = L.tok.encode("Once upon a time", true);
  Generator g(L.model, L.tok, L.ctx, {1, 128, 64, 4});
  Out a, b, c;
  const uint64_t ia = g.submit(request(prompt, greedy(50), &a));
  const uint64_t ib = g.submit(request(prompt, greedy(50), &b));  // waits for the one slot
  g.step();
  g.step();
  EXPECT_TRUE(g.cancel(ib));
  EXPECT_EQ(b.res.reason, FinishReason::cancelled);
  EXPECT_TRUE(g.cancel(ia));
  EXPECT_EQ(a.res.reason, FinishReason::cancelled);
  EXPECT_FALSE(g.cancel(ia));
  EXPECT_TRUE(g.idle());
  // on_token returning false cancels too.
  Request r = request(prompt, greedy(50), &c);
  r.on_token = [&c](const Piece&) { return ++c.res.generated < 3; };
  g.submit(std::move(r));
  g.run();
  EXPECT_EQ(c.res.reason, FinishReason::cancelled);
  EXPECT_EQ(c.res.generated, 3u);
}

TEST(Generate, NextRequestReusesTheCachedPrefix) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  Generator g(L.model, L.tok, L.ctx, {2, 128, 8, 4});
  Out first, second, fresh;
  std::vector<int32_t> prompt = L.tok.encode("Once upon a time, there was a little girl", true);
  g.submit(request(prompt, greedy(10), &first));
  g.run();
  EXPECT_EQ(first.res.cached_tokens, 0u);
  // The conversation goes on: prompt + reply + more text. Only the new tokens are prefilled,
  // and the result equals a fresh generator's.
  std::vector<int32_t> next = prompt;
  next.insert(next.end(), first.tokens.begin(), first.tokens.end() - 1);  // the last one was never fed
  const std::vector<int32_t> more = L.tok.encode(" She said", false);
  next.insert(next.end(), more.begin(), more.end());
  g.submit(request(next, greedy(10), &second));
  g.run();
  EXPECT_EQ(second.res.cached_tokens, prompt.size() + first.tokens.size() - 1);
  EXPECT_EQ(second.res.slot, first.res.slot);
  Generator g2(L.model, L.tok, L.ctx, {1, 128, 8, 4});
  g2.submit(request(next, greedy(10), &fresh));
  g2.run();
  EXPECT_EQ(second.tokens, fresh.tokens);
}

TEST(Generate, FullContextEndsWithLength) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  Generator g(L.model, L.tok, L.ctx, {1, 16, 8, 4});
  Out o;
  GenerateParams p = greedy(0);
  p.ignore_eos = true;
  const std::vector<int32_t> prompt = L.tok.encode("Once upon a time", true);
  g.submit(request(prompt, p, &o));
  g.run();
  EXPECT_EQ(o.res.reason, FinishReason::length);
  EXPECT_EQ(prompt.size() + o.res.generated, 17u);  // 16 positions fed, and the last token sampled
}

// Batch rows of two sequences at their own positions give each sequence's own logits, and bad
// rows are errors that leave the state as it was.
TEST(Generate, ForwardRowsOfTwoSequences) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  const size_t nv = L.model.config().n_vocab;
  const std::vector<int32_t> a = L.tok.encode("Once upon a time", true), b = L.tok.encode("The cat sat", true);
  State one(L.model, 32, 8, L.ctx, 1), two(L.model, 32, 16, L.ctx, 2);
  const float* la = forward(L.model, one, a.data(), a.size());
  const std::vector<float> ref_a(la, la + nv);
  one.reset();
  const float* lb = forward(L.model, one, b.data(), b.size());
  const std::vector<float> ref_b(lb, lb + nv);
  std::vector<int32_t> tokens;
  std::vector<BatchRow> rows;
  for (size_t i = 0; i < b.size(); ++i) tokens.push_back(b[i]), rows.push_back({1, static_cast<uint32_t>(i), i + 1 == b.size()});
  for (size_t i = 0; i < a.size(); ++i) tokens.push_back(a[i]), rows.push_back({0, static_cast<uint32_t>(i), i + 1 == a.size()});
  const float* out = forward(L.model, two, tokens.data(), rows.data(), rows.size());
  // Row-independent kernels: the same values. Not always the same bits: alone, each sequence's
  // logits come from the GEMV (m = 1), together from the GEMM (m = 2); on x86 the two sum in the
  // same order, on Arm (e.g. SME2 FMOPA vs FMLA) they may differ by an ulp or so.
  auto expect_close = [&](const float* got, const std::vector<float>& want) {
    for (size_t i = 0; i < nv; ++i) ASSERT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i]))) << "logit " << i;
  };
  expect_close(out, ref_b);
  expect_close(out + nv, ref_a);
  EXPECT_EQ(two.pos(0), a.size());
  EXPECT_EQ(two.pos(1), b.size());
  const int32_t t = 5;
  const BatchRow no_seq{2, 0, true}, gap{0, static_cast<uint32_t>(a.size() + 1), true}, full{0, 32, true};
  EXPECT_THROW(forward(L.model, two, &t, &no_seq, 1), Error);
  EXPECT_THROW(forward(L.model, two, &t, &gap, 1), Error);
  EXPECT_THROW(forward(L.model, two, &t, &full, 1), Error);
  const int32_t tt[3] = {5, 5, 5};
  const BatchRow three[3] = {{0, static_cast<uint32_t>(a.size()), true}, {0, static_cast<uint32_t>(a.size() + 1), true},
                             {1, static_cast<uint32_t>(b.size()), true}};
  EXPECT_THROW(forward(L.model, two, tt, three, 3), Error);  // 3 logits rows, 2 sequences
  EXPECT_EQ(two.pos(0), a.size());
  two.truncate(0, 2);  // rewinding is allowed
  EXPECT_EQ(two.pos(0), 2u);
  EXPECT_THROW(two.truncate(0, 3), Error);
}

TEST(Generate, BadRequestsAreErrors) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  Generator g(L.model, L.tok, L.ctx, {2, 8, 8, 4});
  Out o;
  EXPECT_THROW(g.submit(request({}, greedy(1), &o)), Error);
  EXPECT_THROW(g.submit(request(std::vector<int32_t>(8, 1), greedy(1), &o)), Error);  // fills the context
  EXPECT_THROW(g.submit(request({1, 100000}, greedy(1), &o)), Error);
  Request r = request({1}, greedy(1), &o);
  r.slot = 2;
  EXPECT_THROW(g.submit(std::move(r)), Error);
  GenerateParams p = greedy(1);
  p.sampling.top_p = 0;
  EXPECT_THROW(g.submit(request({1}, p, &o)), Error);
  p = greedy(1);
  p.stop = {""};
  EXPECT_THROW(g.submit(request({1}, p, &o)), Error);
  EXPECT_TRUE(g.idle());
}

TEST(Generate, EngineThreadServesConcurrentSubmitters) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  std::vector<Out> alone(4);
  {
    Generator g(L.model, L.tok, L.ctx, {1, 128, 16, 4});
    for (size_t i = 0; i < 4; ++i) {
      g.submit(request(L.tok.encode(kPrompts[i], true), greedy(16), &alone[i]));
      g.run();
    }
  }
  std::vector<Out> outs(4);
  {
    GeneratorThread engine(L.model, L.tok, L.ctx, {2, 128, 16, 8});
    std::vector<std::future<void>> clients;
    for (size_t i = 0; i < 4; ++i) {
      clients.push_back(std::async(std::launch::async, [&, i] {
        std::promise<void> done;
        Request r = request(L.tok.encode(kPrompts[i], true), greedy(16), &outs[i]);
        auto finished = r.on_done;
        r.on_done = [&](const Result& res) {
          finished(res);
          done.set_value();
        };
        ASSERT_TRUE(engine.submit(std::move(r)).has_value());
        done.get_future().wait();
      }));
    }
    for (auto& c : clients) c.get();
    // A request cancelled from another thread ends; an unknown id is ignored. (Its first token
    // waits for the cancel, which the engine takes before its next step.)
    Out slow;
    std::promise<void> done;
    std::atomic<bool> sent{false};
    Request r = request(L.tok.encode("Once", true), greedy(0), &slow);
    r.params.ignore_eos = true;
    r.on_token = [&](const Piece&) {
      while (!sent) std::this_thread::yield();
      return true;
    };
    r.on_done = [&](const Result& res) {
      slow.res = res;
      done.set_value();
    };
    const auto id = engine.submit(std::move(r));
    ASSERT_TRUE(id.has_value());
    engine.cancel(*id + 100);
    engine.cancel(*id);
    sent = true;
    done.get_future().wait();
    EXPECT_EQ(slow.res.reason, FinishReason::cancelled);
    EXPECT_THROW(engine.submit(request({}, greedy(1), &slow)), Error);
  }
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(outs[i].tokens, alone[i].tokens) << i;
}

TEST(Generate, EngineThreadQueueIsBounded) {
  QMM_REQUIRE_STORIES260K();
  Loaded L(test::stories260k_path());
  std::atomic<int> cancelled{0};
  std::atomic<bool> release{false};
  {
    GeneratorThread engine(L.model, L.tok, L.ctx, {1, 64, 16, 2});
    GenerateParams p = greedy(0);
    p.ignore_eos = true;
    size_t refused = 0;
    for (int i = 0; i < 6; ++i) {
      Request r;
      r.prompt = {1};
      r.params = p;
      r.on_token = [&](const Piece&) {  // the running one holds the engine until the end of the test
        while (!release) std::this_thread::yield();
        return true;
      };
      r.on_done = [&](const Result& res) { cancelled += res.reason == FinishReason::cancelled; };
      refused += !engine.submit(std::move(r)).has_value();
    }
    EXPECT_EQ(refused, 3u);  // one runs, two wait: slots + queue, however far the engine got
    release = true;
  }
  EXPECT_GE(cancelled.load(), 1);  // the destructor ends what was left
}

// Gemma's sliding-window layers keep a ring of window + n_batch - 1 positions (tiny-gemma3 /
// tiny-gemma2: window 8). A context of 48 positions fed in steps of 1, 3, 16 and a 20-token
// prefill then decoding gives the logits of a cache that keeps every position, at every step end,
// up to the last position of the context; the KV memory is the ring's.
std::string synth_window_model(const char* shape) {
  const std::string path = ::testing::TempDir() + "window_" + std::string(shape) + "_q8_0.gguf";
  gguf::synth_model(*gguf::find_synth_shape(shape), WeightType::q8_0, 3, path, 1);
  return path;
}

std::vector<int32_t> some_tokens(size_t n, uint32_t seed) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>(10 + (seed * 7919u + i * 104729u) % 1000u);
  return t;
}

TEST(SlidingWindow, RingCacheLogitsEqualTheFullCacheAcrossStepSizes) {
  for (const char* shape : {"tiny-gemma3", "tiny-gemma2"}) {
    Loaded L(synth_window_model(shape));
    for (KvType kv : {KvType::f32, KvType::f16, KvType::q8_0, KvType::q4_0}) {  // every cache type
      const Config& c = L.model.config();
      ASSERT_EQ(c.n_swa, 8u) << shape;
      const size_t n_ctx = 48, nv = c.n_vocab;
      const std::vector<int32_t> tokens = some_tokens(n_ctx, 1);
      for (const std::vector<size_t>& steps : std::vector<std::vector<size_t>>{{1}, {3}, {16}, {20, 1}}) {
        // The same steps with a full cache (a ring of min(48, 8 + 47) = every position): the same
        // GEMM / GEMV calls, so only the ring differs (on Arm a GEMM and a GEMV of the same rows
        // round differently, and these random models amplify one rounding step to percents).
        const size_t n_batch = steps[0];
        State full(L.model, n_ctx, n_ctx, L.ctx, 1, {kv, kv}), s(L.model, n_ctx, n_batch, L.ctx, 1, {kv, kv});
        ASSERT_EQ(full.window_slots(), n_ctx);
        EXPECT_EQ(s.window_slots(), 8 + n_batch - 1);
        size_t local = 0;
        for (size_t l = 0; l < c.n_layer; ++l) local += c.is_local(l);
        const size_t slots = local * s.window_slots() + (c.n_layer - local) * n_ctx;
        EXPECT_EQ(s.kv_bytes(), 2 * kv_row_bytes(kv, c.head_dim) * c.n_head_kv * slots) << shape;
        EXPECT_LT(s.kv_bytes(), full.kv_bytes());
        for (size_t p = 0, k = 0; p < n_ctx; ++k) {
          const size_t n = std::min(steps[std::min(k, steps.size() - 1)], n_ctx - p);
          const float* l = forward(L.model, full, &tokens[p], n);
          const std::vector<float> want(l, l + nv);
          const float* got = forward(L.model, s, &tokens[p], n);
          p += n;
          double worst = 0;
          for (size_t i = 0; i < nv; ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / (1.0 + std::fabs(want[i])));
          // Attention sums the same positions in the same order wherever the ring wraps.
          ASSERT_LE(worst, 1e-5) << shape << " " << kv_type_name(kv) << ", steps of " << n_batch << ", position " << p - 1;
        }
        EXPECT_EQ(s.pos(), n_ctx);
      }
    }
  }
}

// Rewinding needs the window before the new end: within the ring it is kept, past it truncate
// keeps nothing (the sequence starts over), and a batch row rewinding past it is an error.
TEST(SlidingWindow, RewindKeepsOnlyWhatTheRingHolds) {
  Loaded L(synth_window_model("tiny-gemma3"));
  const std::vector<int32_t> tokens = some_tokens(30, 2);
  State s(L.model, 64, 1, L.ctx);  // ring of 8: after 30 positions it holds 22..29
  ASSERT_EQ(s.window_slots(), 8u);
  for (int32_t t : tokens) forward(L.model, s, &t, 1);
  EXPECT_EQ(s.truncate(0, 29), 29u);  // position 29's window reads 22..28
  EXPECT_EQ(s.truncate(0, 29), 29u);
  const BatchRow back{0, 20, true};
  EXPECT_THROW(forward(L.model, s, &tokens[20], &back, 1), Error);
  EXPECT_EQ(s.truncate(0, 20), 0u);  // 13..19 were overwritten
  EXPECT_EQ(s.pos(), 0u);
  forward(L.model, s, tokens.data(), 1);  // and it starts over
  EXPECT_EQ(s.pos(), 1u);
}

// Three sequences longer than the window decoded together (prompts prefilled in chunks of 4
// beside the others' decoding rows) give each one's greedy tokens with a full cache alone; a
// later request whose cached prefix ends outside the ring is prefilled whole.
TEST(SlidingWindow, SequencesDecodedTogetherEqualAloneWithAFullCache) {
  Loaded L(synth_window_model("tiny-gemma3"));
  GenerateParams p = greedy(20);
  p.ignore_eos = true;
  const std::vector<std::vector<int32_t>> prompts = {some_tokens(20, 3), some_tokens(27, 4), some_tokens(33, 5)};
  std::vector<Out> alone(prompts.size()), together(prompts.size());
  // An F32 cache: on Arm the SME2 GEMM (batched rows) and GEMV (a lone row) round differently in
  // the last bits, and an F16 cache's rounding of K and V turned that into a different greedy
  // token of this random tiny model at step 7. What this test checks is the batching and the rings.
  const KvTypes f32{KvType::f32, KvType::f32};
  for (size_t i = 0; i < prompts.size(); ++i) {
    Generator g(L.model, L.tok, L.ctx, {1, 64, 64, 8, f32});
    g.submit(request(prompts[i], p, &alone[i]));
    g.run();
    ASSERT_EQ(alone[i].tokens.size(), 20u);
  }
  Generator g(L.model, L.tok, L.ctx, {prompts.size(), 64, 4, 8, f32});
  for (size_t i = 0; i < prompts.size(); ++i) g.submit(request(prompts[i], p, &together[i]));
  g.run();
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(together[i].tokens, alone[i].tokens) << "prompt " << i;
  // Slot 0 holds 20 + 19 positions, its rings the last 8 + 7 + 3 - 1 = 17: a prompt sharing
  // its first 10 tokens cannot reuse them.
  Out again;
  std::vector<int32_t> next(prompts[0].begin(), prompts[0].begin() + 10);
  next.push_back(5);
  Request r = request(next, p, &again);
  r.slot = 0;
  g.submit(std::move(r));
  g.run();
  EXPECT_EQ(again.res.cached_tokens, 0u);
  EXPECT_EQ(again.tokens.size(), 20u);
}

// qmm run -r: a reverse prompt split over streamed pieces is found, once found stays found, and
// text before it never matches across what was dropped.
TEST(ReversePrompts, FoundAcrossPieces) {
  ReversePrompts r({"User:", "###"});
  EXPECT_FALSE(r.feed("Once upon a time. Us"));
  EXPECT_FALSE(r.feed("e"));
  EXPECT_TRUE(r.feed("r: hi"));
  EXPECT_TRUE(r.feed("more"));
  ReversePrompts h({"###"});
  EXPECT_FALSE(h.feed("#"));
  EXPECT_FALSE(h.feed("#x#"));
  EXPECT_TRUE(h.feed("##"));
  ReversePrompts none({});
  EXPECT_FALSE(none.feed("User: ###"));
}

}  // namespace
}  // namespace qmm::llm
