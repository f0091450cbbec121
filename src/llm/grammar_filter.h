// The grammar as the sampler's TokenFilter: a token is allowed when the grammar matcher
// accepts its bytes; an end-of-generation token when the grammar may end there.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "llm/sampler.h"
#include "text/grammar.h"
#include "text/grammar_vocab.h"

namespace qmm::llm {

class GrammarFilter : public TokenFilter {
 public:
  // `vocab` must outlive the filter; `is_end` tells end-of-generation tokens.
  GrammarFilter(std::shared_ptr<const Grammar> g, const GrammarVocab& vocab, std::function<bool(int32_t)> is_end);
  bool allows(int32_t token) override;
  void restrict(std::span<float> logits) override;
  // The sampled token moves the grammar on (an end token changes nothing).
  void accept(int32_t token);
  // Nothing more can follow: generation ends.
  bool done() const { return m_.done(); }

 private:
  GrammarMatcher m_;
  const GrammarVocab& vocab_;
  std::function<bool(int32_t)> is_end_;
  std::vector<uint8_t> allowed_;
};

}  // namespace qmm::llm
