// Log-probabilities of generated tokens for `qmm serve`'s `logprobs` / `top_logprobs` (OpenAI)
// and `n_probs` (llama-server). They are of the model's own distribution, the log-softmax of the
// raw logits, before the penalties, top-k / top-p / min-p and temperature: what llama-server
// reports (without post_sampling_probs) and what OpenAI documents (they do not change with the
// sampling settings). The sampled token's log-prob is given whether or not it is in the top n.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace qmm::llm {

struct TokenLogprob {
  int32_t token = -1;
  float logprob = 0;  // natural log; -inf only where the probability underflows float
};

struct TokenLogprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;  // the n most likely tokens, most likely first (ties: lower id)
};

// Fills `out` for the token `chosen` of `logits` [n_vocab] and the n_top best (n_top ≤ n_vocab
// is not required: at most n_vocab are listed). Costs one pass over the logits plus n_top·log.
void token_logprobs(const float* logits, size_t n_vocab, int32_t chosen, size_t n_top, TokenLogprobs& out);

}  // namespace qmm::llm
