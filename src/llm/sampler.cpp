#include "llm/sampler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace qmm::llm {

Sampler::Sampler(const SamplerParams& p, size_t n_vocab) : p_(p), rng_(p.seed), logits_(n_vocab) {
  check_arg(n_vocab > 0, "empty vocabulary");
  check_arg(!(p.top_p <= 0.0f) && !(p.min_p > 1.0f) && !(p.repeat_penalty <= 0.0f),
            "top-p must be > 0, min-p at most 1 and the repeat penalty > 0");
  check_arg(std::isfinite(p.frequency_penalty) && std::isfinite(p.presence_penalty), "the penalties must be finite");
  cand_.reserve(n_vocab);
}

int32_t Sampler::sample(const float* logits, std::span<const int32_t> history, TokenFilter* filter) {
  const size_t n = logits_.size();
  std::copy(logits, logits + n, logits_.begin());
  // NaN / Inf logits (weights or activations that overflowed) have no meaningful sample.
  if (const auto bad = std::find_if(logits_.begin(), logits_.end(), [](float x) { return !std::isfinite(x); });
      bad != logits_.end()) {
    fail(Status::io, "the model's logits are not finite (token " + std::to_string(bad - logits_.begin()) + " has " +
                         std::to_string(*bad) + "): its weights or activations are NaN or overflow");
  }

  // Penalties, llama.cpp's: each distinct token of the last repeat_last_n has its logit
  // divided (if > 0) or multiplied (if <= 0) by the repeat penalty, then lowered by
  // count x frequency_penalty + presence_penalty.
  const bool penalise = p_.repeat_penalty != 1.0f || p_.frequency_penalty != 0.0f || p_.presence_penalty != 0.0f;
  if (penalise && p_.repeat_last_n > 0) {
    const size_t from = history.size() > p_.repeat_last_n ? history.size() - p_.repeat_last_n : 0;
    window_.assign(history.begin() + static_cast<std::ptrdiff_t>(from), history.end());
    std::sort(window_.begin(), window_.end());
    for (size_t i = 0; i < window_.size();) {
      const int32_t t = window_[i];
      size_t count = 0;
      for (; i < window_.size() && window_[i] == t; ++i) ++count;
      if (t < 0 || static_cast<size_t>(t) >= n) continue;
      float& l = logits_[static_cast<size_t>(t)];
      l = l > 0 ? l / p_.repeat_penalty : l * p_.repeat_penalty;
      l -= static_cast<float>(count) * p_.frequency_penalty + p_.presence_penalty;
    }
  }

  const int32_t t = draw();
  if (!filter || filter->allows(t)) return t;
  filter->restrict(logits_);
  if (std::all_of(logits_.begin(), logits_.end(), [](float x) { return std::isinf(x); })) {
    fail(Status::invalid_argument, "the grammar allows no token of the vocabulary here");
  }
  return draw();
}

int32_t Sampler::draw() {
  const size_t n = logits_.size();
  // Greedy: the highest logit (the first of equals).
  if (p_.temperature <= 0.0f) return static_cast<int32_t>(std::max_element(logits_.begin(), logits_.end()) - logits_.begin());

  cand_.clear();
  for (size_t i = 0; i < n; ++i) cand_.push_back({static_cast<int32_t>(i), logits_[i], 0.0f});
  auto by_logit = [](const Cand& a, const Cand& b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); };

  // Top-k: keep the k highest logits, sorted.
  size_t keep = n;
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < n) keep = static_cast<size_t>(p_.top_k);
  std::partial_sort(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(keep), cand_.end(), by_logit);
  cand_.resize(keep);
  while (cand_.size() > 1 && std::isinf(cand_.back().logit)) cand_.pop_back();  // refused by a filter

  // Softmax over what is left (for top-p and min-p).
  auto softmax = [&](float temp) {
    const float mx = cand_.front().logit;
    float sum = 0.0f;
    for (Cand& c : cand_) sum += (c.p = std::exp((c.logit - mx) / temp));
    for (Cand& c : cand_) c.p /= sum;
  };
  softmax(1.0f);

  // Top-p: the smallest prefix whose probability reaches p.
  if (p_.top_p < 1.0f) {
    float cum = 0.0f;
    size_t i = 0;
    while (i < cand_.size()) {
      cum += cand_[i++].p;
      if (cum >= p_.top_p) break;
    }
    cand_.resize(i);
  }

  // Min-p: drop tokens below min_p times the best one's probability.
  if (p_.min_p > 0.0f) {
    const float floor_p = p_.min_p * cand_.front().p;
    size_t i = 1;
    while (i < cand_.size() && cand_[i].p >= floor_p) ++i;
    cand_.resize(i);
  }

  // Temperature, then a draw.
  softmax(p_.temperature);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  float r = u(rng_), cum = 0.0f;
  for (const Cand& c : cand_) {
    cum += c.p;
    if (r < cum) return c.id;
  }
  return cand_.back().id;
}

}  // namespace qmm::llm
