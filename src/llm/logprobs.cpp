#include "llm/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qmm::llm {

void token_logprobs(const float* logits, size_t n_vocab, int32_t chosen, size_t n_top, TokenLogprobs& out) {
  out.top.clear();
  if (n_vocab == 0) return;
  const float mx = *std::max_element(logits, logits + n_vocab);
  double sum = 0;
  for (size_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - mx));
  const float log_z = mx + static_cast<float>(std::log(sum));
  const auto lp = [&](size_t i) { return logits[i] - log_z; };
  out.chosen = {chosen, chosen >= 0 && static_cast<size_t>(chosen) < n_vocab ? lp(static_cast<size_t>(chosen))
                                                                             : -std::numeric_limits<float>::infinity()};
  n_top = std::min(n_top, n_vocab);
  if (n_top == 0) return;
  // A min-heap of the best n_top so far (worst on top): one pass, no copy of the vocabulary.
  const auto better = [](const TokenLogprob& a, const TokenLogprob& b) {
    return a.logprob > b.logprob || (a.logprob == b.logprob && a.token < b.token);
  };
  out.top.reserve(n_top);
  for (size_t i = 0; i < n_vocab; ++i) {
    const TokenLogprob c{static_cast<int32_t>(i), lp(i)};
    if (out.top.size() < n_top) {
      out.top.push_back(c);
      std::push_heap(out.top.begin(), out.top.end(), better);
    } else if (better(c, out.top.front())) {
      std::pop_heap(out.top.begin(), out.top.end(), better);
      out.top.back() = c;
      std::push_heap(out.top.begin(), out.top.end(), better);
    }
  }
  std::sort_heap(out.top.begin(), out.top.end(), better);
}

}  // namespace qmm::llm
