// Next-token sampling, in llama.cpp's default order: repetition penalty over the last
// tokens, top-k, top-p, min-p, temperature, then a draw from the softmax (seeded). A
// temperature of 0 (or below) picks the highest logit after the penalty (greedy).
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
  size_t repeat_last_n = 64;    // tokens of history the penalty looks at
  uint64_t seed = 0;
};

class Sampler {
 public:
  Sampler(const SamplerParams& p, size_t n_vocab);
  // `history`: the tokens so far (prompt and generated), for the repetition penalty.
  int32_t sample(const float* logits, std::span<const int32_t> history);

 private:
  struct Cand {
    int32_t id;
    float logit;
    float p;
  };
  SamplerParams p_;
  std::mt19937_64 rng_;
  std::vector<Cand> cand_;      // reused every token
  std::vector<float> logits_;   // penalised copy of the logits
};

}  // namespace qmm::llm
