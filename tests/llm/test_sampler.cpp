// Sampler: greedy, top-k / top-p / min-p filtering, repetition penalty, seeding.
#include <gtest/gtest.h>

#include <set>

#include "llm/sampler.h"

namespace qmm::llm {
namespace {

const std::vector<float> kLogits = {1.0f, 3.0f, 2.0f, 2.9f, -1.0f, 0.5f};

TEST(Sampler, GreedyPicksTheHighestLogit) {
  SamplerParams p;
  p.temperature = 0;
  Sampler s(p, kLogits.size());
  EXPECT_EQ(s.sample(kLogits.data(), {}), 1);
}

TEST(Sampler, TopKOneIsGreedyAtAnyTemperature) {
  SamplerParams p;
  p.temperature = 5.0f;
  p.top_k = 1;
  Sampler s(p, kLogits.size());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(kLogits.data(), {}), 1);
}

TEST(Sampler, TopKLimitsTheChoices) {
  SamplerParams p;
  p.temperature = 100.0f;  // nearly uniform over what survives
  p.top_k = 3;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  Sampler s(p, kLogits.size());
  std::set<int32_t> seen;
  for (int i = 0; i < 500; ++i) seen.insert(s.sample(kLogits.data(), {}));
  EXPECT_EQ(seen, (std::set<int32_t>{1, 2, 3}));
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  SamplerParams p;
  p.temperature = 100.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.5f;  // keeps p >= 0.5 · p(best): logits within ln 2 of the best (3.0, 2.9)
  Sampler s(p, kLogits.size());
  std::set<int32_t> seen;
  for (int i = 0; i < 300; ++i) seen.insert(s.sample(kLogits.data(), {}));
  EXPECT_EQ(seen, (std::set<int32_t>{1, 3}));
}

TEST(Sampler, TopPKeepsTheSmallestSufficientPrefix) {
  SamplerParams p;
  p.temperature = 100.0f;
  p.top_k = 0;
  p.min_p = 0.0f;
  p.top_p = 0.3f;  // the best token alone has p ≈ 0.37 at temperature 1
  Sampler s(p, kLogits.size());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(s.sample(kLogits.data(), {}), 1);
}

TEST(Sampler, RepetitionPenaltyDemotesRecentTokens) {
  SamplerParams p;
  p.temperature = 0;
  p.repeat_penalty = 1.5f;
  Sampler s(p, kLogits.size());
  const std::vector<int32_t> history = {1, 1, 4};
  EXPECT_EQ(s.sample(kLogits.data(), history), 3);  // 3.0 / 1.5 = 2.0 < 2.9
  p.repeat_last_n = 1;                              // only token 4 is recent
  Sampler s2(p, kLogits.size());
  EXPECT_EQ(s2.sample(kLogits.data(), history), 1);
}

// llama.cpp's penalties: logit -= count x frequency_penalty + presence_penalty, over the window.
TEST(Sampler, FrequencyAndPresencePenaltiesAsLlamaCpp) {
  SamplerParams p;
  p.temperature = 0;
  const std::vector<int32_t> history = {1, 1, 3, 2};  // token 1 twice, 3 and 2 once
  p.frequency_penalty = 0.3f;                          // 1: 3.0 - 0.6 = 2.4, 3: 2.9 - 0.3 = 2.6
  EXPECT_EQ(Sampler(p, kLogits.size()).sample(kLogits.data(), history), 3);
  p.frequency_penalty = 0.04f;                         // 1: 2.92, 3: 2.86
  EXPECT_EQ(Sampler(p, kLogits.size()).sample(kLogits.data(), history), 1);
  p.frequency_penalty = 0;
  p.presence_penalty = 1.5f;                           // 1: 1.5, 3: 1.4, 2: 0.5, 0: 1.0 (not seen)
  EXPECT_EQ(Sampler(p, kLogits.size()).sample(kLogits.data(), history), 1);
  p.presence_penalty = -2.0f;                          // a negative penalty favours seen tokens
  p.repeat_last_n = 1;                                 // only token 2 (2.0 + 2 = 4.0)
  EXPECT_EQ(Sampler(p, kLogits.size()).sample(kLogits.data(), history), 2);
  p.repeat_last_n = 64;
  p.presence_penalty = 0;
  p.repeat_penalty = 2.0f;                             // the repeat penalty first: 1: 1.5 - 0.5 = 1.0
  p.frequency_penalty = 0.25f;                         // 3: 1.45 - 0.25 = 1.2, 2: 1.0 - 0.25, 0: 1.0
  EXPECT_EQ(Sampler(p, kLogits.size()).sample(kLogits.data(), history), 3);
}

TEST(Sampler, SameSeedSameTokens) {
  SamplerParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = 1234;
  Sampler a(p, kLogits.size()), b(p, kLogits.size());
  std::vector<int32_t> ta, tb;
  for (int i = 0; i < 64; ++i) {
    ta.push_back(a.sample(kLogits.data(), {}));
    tb.push_back(b.sample(kLogits.data(), {}));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_GT(std::set<int32_t>(ta.begin(), ta.end()).size(), 2u);  // it does sample
}

}  // namespace
}  // namespace qmm::llm
