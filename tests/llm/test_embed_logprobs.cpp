// The generator's log-probabilities (of the model's raw distribution, whatever the sampling
// settings) and embeddings (final-norm hidden states pooled over the whole prompt, unit length,
// the same whatever the prefill chunk size or the slot's cached prefix), on stories260K.
#include <gtest/gtest.h>

#include <cmath>

#include "llm/embed.h"
#include "llm/generate.h"
#include "llm/logprobs.h"
#include "llm/ops.h"
#include "test_models.h"

namespace qmm::llm {
namespace {

TEST(Logprobs, LogSoftmaxTopSortedAndChosenAlwaysGiven) {
  const float logits[] = {1.0f, 3.0f, 3.0f, -2.0f, 0.5f};
  TokenLogprobs out;
  token_logprobs(logits, 5, 3, 2, out);
  double z = 0;
  for (float l : logits) z += std::exp(l);
  EXPECT_EQ(out.chosen.token, 3);
  EXPECT_NEAR(out.chosen.logprob, -2.0 - std::log(z), 1e-5);
  ASSERT_EQ(out.top.size(), 2u);
  EXPECT_EQ(out.top[0].token, 1);  // equal logits: the lower id first
  EXPECT_EQ(out.top[1].token, 2);
  EXPECT_NEAR(out.top[0].logprob, 3.0 - std::log(z), 1e-5);
  token_logprobs(logits, 5, 0, 100, out);  // more than the vocabulary: all of it, sorted
  ASSERT_EQ(out.top.size(), 5u);
  EXPECT_EQ(out.top[4].token, 3);
  token_logprobs(logits, 5, 4, 0, out);
  EXPECT_TRUE(out.top.empty());
}

struct Loaded {
  Context ctx{1};
  Model model;
  Tokenizer tok;
  Loaded() : model(Model::load(test::stories260k_path(), {}, ctx.pool())), tok(Tokenizer::from_gguf(model.file())) {}
};

Loaded& stories() {
  static Loaded l;
  return l;
}

struct Outcome {
  std::vector<int32_t> tokens;
  std::vector<TokenLogprobs> lp;
  std::vector<float> embedding;
  Result res;
};

Outcome run(Generator& g, Request r) {
  Outcome out;
  r.on_token = [&out, want = r.params.logprobs >= 0](const Piece& p) {
    if (p.token < 0) return true;
    out.tokens.push_back(p.token);
    EXPECT_EQ(p.logprobs != nullptr, want);
    if (p.logprobs) out.lp.push_back(*p.logprobs);
    return true;
  };
  r.on_embedding = [&out](std::vector<float> v) { out.embedding = std::move(v); };
  r.on_done = [&out](const Result& res) { out.res = res; };
  g.submit(std::move(r));
  g.run();
  return out;
}

TEST(Logprobs, OfTheRawDistributionNotTheSampled) {
  QMM_REQUIRE_STORIES260K();
  Loaded& L = stories();
  Generator g(L.model, L.tok, L.ctx, {1, 128, 16, 4});
  Request r;
  r.prompt = L.tok.encode("Once upon a time", true);
  r.params.max_tokens = 12;
  r.params.ignore_eos = true;
  r.params.logprobs = 3;
  r.params.sampling.temperature = 0;
  const Outcome greedy = run(g, r);
  // top-k 1 at temperature 1.7 draws the same tokens: the log-probs do not change with it.
  r.params.sampling.temperature = 1.7f;
  r.params.sampling.top_k = 1;
  const Outcome hot = run(g, r);
  ASSERT_EQ(greedy.tokens.size(), 12u);
  ASSERT_EQ(greedy.tokens, hot.tokens);
  for (size_t i = 0; i < greedy.lp.size(); ++i) {
    const TokenLogprobs& a = greedy.lp[i];
    ASSERT_EQ(a.top.size(), 3u);
    EXPECT_EQ(a.chosen.token, greedy.tokens[i]);
    EXPECT_EQ(a.top[0].token, a.chosen.token);  // greedy: the best one
    EXPECT_LE(a.top[0].logprob, 0.0f);
    EXPECT_GE(a.top[0].logprob, a.top[1].logprob);
    EXPECT_LE(std::exp(a.top[0].logprob) + std::exp(a.top[1].logprob) + std::exp(a.top[2].logprob), 1.0001);
    EXPECT_FLOAT_EQ(a.chosen.logprob, hot.lp[i].chosen.logprob);
    EXPECT_FLOAT_EQ(a.top[2].logprob, hot.lp[i].top[2].logprob);
  }
  r.params.logprobs = -1;  // off: no pointer
  r.on_token = [](const Piece& p) {
    EXPECT_EQ(p.logprobs, nullptr);
    return true;
  };
  g.submit(r);
  g.run();
}

Request embed_request(const std::vector<int32_t>& prompt, Pooling p) {
  Request r;
  r.prompt = prompt;
  r.embed = p;
  return r;
}

float dot(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(Embeddings, PooledFinalNormStatesOfTheWholePrompt) {
  QMM_REQUIRE_STORIES260K();
  Loaded& L = stories();
  const std::vector<int32_t> prompt = L.tok.encode("The little dog ran to the park and played with a ball.", true);
  const size_t dim = L.model.config().n_embd;
  // By hand: one forward pass over the prompt, every row normed, averaged, unit length.
  State st(L.model, 128, 64, L.ctx);
  forward(L.model, st, prompt.data(), prompt.size());
  std::vector<float> mean(dim, 0.0f), last(dim), first(dim), row(dim);
  for (size_t i = 0; i < prompt.size(); ++i) {
    rmsnorm(row.data(), st.hidden() + i * dim, L.model.output_norm().data(), dim, L.model.config().norm_eps);
    for (size_t j = 0; j < dim; ++j) mean[j] += row[j];
    if (i == 0) first = row;
    last = row;
  }
  auto unit = [](std::vector<float> v) {
    float n = 0;
    for (float x : v) n += x * x;
    for (float& x : v) x /= std::sqrt(n);
    return v;
  };
  // Chunks of 3 (the prompt is prefilled over several steps) or 64 (one step).
  for (size_t n_batch : {3u, 64u}) {
    Generator g(L.model, L.tok, L.ctx, {2, 128, n_batch, 4});
    // A generation first, so that the slot's cache holds a prefix of the prompt: not reused.
    Request gen;
    gen.prompt = std::vector<int32_t>(prompt.begin(), prompt.begin() + 4);
    gen.params.max_tokens = 3;
    gen.slot = 0;
    run(g, gen);
    for (auto [p, want] : {std::pair{Pooling::mean, unit(mean)}, {Pooling::last, unit(last)}, {Pooling::cls, unit(first)}}) {
      Request r = embed_request(prompt, p);
      r.slot = 0;
      const Outcome e = run(g, r);
      ASSERT_EQ(e.embedding.size(), dim);
      EXPECT_TRUE(e.tokens.empty());
      EXPECT_EQ(e.res.reason, FinishReason::stop);
      EXPECT_EQ(e.res.prompt_tokens, prompt.size());
      EXPECT_EQ(e.res.generated, 0u);
      EXPECT_NEAR(dot(e.embedding, e.embedding), 1.0f, 1e-4);
      EXPECT_NEAR(dot(e.embedding, want), 1.0f, 1e-4) << pooling_name(p) << " n_batch " << n_batch;
    }
  }
  Generator g(L.model, L.tok, L.ctx, {1, 128, 64, 4});
  const Outcome a = run(g, embed_request(prompt, Pooling::mean));
  const Outcome b = run(g, embed_request(L.tok.encode("Once upon a time there was a cat.", true), Pooling::mean));
  EXPECT_LT(dot(a.embedding, b.embedding), 0.9999f);  // other text, another vector
}

TEST(Embeddings, PoolingNames) {
  EXPECT_EQ(parse_pooling("mean"), Pooling::mean);
  EXPECT_EQ(parse_pooling("last"), Pooling::last);
  EXPECT_EQ(parse_pooling("cls"), Pooling::cls);
  EXPECT_FALSE(parse_pooling("none"));
  EXPECT_FALSE(parse_pooling("rank"));
}

}  // namespace
}  // namespace qmm::llm
