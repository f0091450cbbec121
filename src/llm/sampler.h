// Next-token sampling, in llama.cpp's default order: the penalties over the last tokens,
// top-k, top-p, min-p, temperature, then a draw from the softmax (seeded). A temperature of 0
// (or below) picks the highest logit after the penalties (greedy).
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace qmm::llm {

struct SamplerParams {
  float temperature = 0.8f;
  int top_k = 40;               // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  size_t repeat_last_n = 64;    // tokens of history the penalties look at
  float frequency_penalty = 0;  // subtracted once per occurrence of a token (0: off)
  float presence_penalty = 0;   // subtracted once from every token that occurs (0: off)
  uint64_t seed = 0;
};

// A constraint on the next token (a grammar). The sampler draws as usual and asks allows();
// only when the drawn token is refused does it ask restrict() to remove every refused token
// (logits set to -infinity) and draw again, so a constraint the model already follows costs
// one check per token.
class TokenFilter {
 public:
  virtual ~TokenFilter() = default;
  virtual bool allows(int32_t token) = 0;
  virtual void restrict(std::span<float> logits) = 0;
};

class Sampler {
 public:
  Sampler(const SamplerParams& p, size_t n_vocab);
  // `history`: the tokens so far (prompt and generated), for the repetition penalty.
  // `filter`: optional; Error(invalid_argument) if it refuses every token.
  int32_t sample(const float* logits, std::span<const int32_t> history, TokenFilter* filter = nullptr);

 private:
  struct Cand {
    int32_t id;
    float logit;
    float p;
  };
  int32_t draw();  // from logits_
  SamplerParams p_;
  std::mt19937_64 rng_;
  std::vector<Cand> cand_;      // reused every token
  std::vector<float> logits_;   // penalised copy of the logits
  std::vector<int32_t> window_; // the penalties' window of the history, sorted
};

}  // namespace qmm::llm
