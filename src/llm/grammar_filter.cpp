#include "llm/grammar_filter.h"

#include <limits>

#include "core/error.h"

namespace qmm::llm {

GrammarFilter::GrammarFilter(std::shared_ptr<const Grammar> g, const GrammarVocab& vocab,
                             std::function<bool(int32_t)> is_end)
    : m_(std::move(g)), vocab_(vocab), is_end_(std::move(is_end)) {}

bool GrammarFilter::allows(int32_t token) {
  if (is_end_(token)) return m_.complete();
  return vocab_.allows(m_, token);
}

void GrammarFilter::restrict(std::span<float> logits) {
  vocab_.allowed(m_, allowed_);
  const bool complete = m_.complete();
  for (size_t t = 0; t < logits.size(); ++t) {
    const bool ok = is_end_(static_cast<int32_t>(t)) ? complete : t < allowed_.size() && allowed_[t];
    if (!ok) logits[t] = -std::numeric_limits<float>::infinity();
  }
}

void GrammarFilter::accept(int32_t token) {
  if (is_end_(token)) return;
  if (!m_.accept(vocab_.bytes(token))) fail(Status::internal, "the grammar refused a token it allowed");
}

}  // namespace qmm::llm
