// A tokenizer's vocabulary as the grammar matcher sees it: each token's bytes decoded into
// code points once, and a prefix trie over them, so that finding every token a grammar state
// allows walks shared prefixes once and skips a whole subtree at its first refused code point
// (most of the vocabulary, in a JSON grammar). A walk numbers the grammar states it meets and
// remembers each state's step by a code point, so that inside a JSON string (where nearly every
// character leads back to the same state) a node costs one hash lookup. Built once per tokenizer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "text/grammar.h"
#include "text/tokenizer.h"

namespace qmm::llm {

class GrammarVocab {
 public:
  explicit GrammarVocab(const Tokenizer& tok);

  // Whether the matcher accepts token t's bytes (a token without bytes, a control token: never).
  bool allows(const GrammarMatcher& m, int32_t t) const;
  // allowed[t] = 1 for each token the matcher accepts, 0 otherwise (size n_vocab).
  void allowed(const GrammarMatcher& m, std::vector<uint8_t>& allowed) const;
  const std::string& bytes(int32_t t) const { return pieces_[static_cast<size_t>(t)]; }
  size_t size() const { return pieces_.size(); }

 private:
  struct Node {
    uint32_t cp;     // the code point that leads here from the parent
    uint32_t end;    // one past the last node of this subtree (preorder)
    uint32_t first;  // tokens ending here: tokens_[first, first + count)
    uint32_t count;
  };
  struct Walk;
  void visit(Walk& w, uint32_t node, int32_t state, std::vector<uint8_t>& allowed) const;
  std::vector<std::string> pieces_;
  std::vector<uint32_t> tail_;   // per token: the byte offset of its incomplete last code point
  std::vector<Node> nodes_;      // preorder; node 0 is the root (the empty prefix)
  std::vector<int32_t> tokens_;
};

}  // namespace qmm::llm
