#include "text/grammar_vocab.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

namespace qmm::llm {

GrammarVocab::GrammarVocab(const Tokenizer& tok) : pieces_(tok.n_vocab()), tail_(tok.n_vocab(), 0) {
  std::vector<std::vector<uint32_t>> cps(tok.n_vocab());
  std::vector<int32_t> order;
  for (size_t t = 0; t < tok.n_vocab(); ++t) {
    pieces_[t] = tok.piece(static_cast<int32_t>(t));
    std::string_view rest;
    if (pieces_[t].empty() || !decode_utf8_prefix(pieces_[t], cps[t], rest)) {
      pieces_[t].clear();  // never allowed
      continue;
    }
    tail_[t] = static_cast<uint32_t>(pieces_[t].size() - rest.size());
    order.push_back(static_cast<int32_t>(t));
  }
  // Ties by token id (order holds them increasing): a stable sort, without libstdc++ 12's
  // stable_sort (its deprecated get_temporary_buffer fails clang's -Werror).
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return cps[a] < cps[b] || (cps[a] == cps[b] && a < b); });
  // Preorder trie: `path` holds the nodes of the previous token's code points.
  nodes_.push_back({0, 0, 0, 0});
  std::vector<uint32_t> path{0};
  const std::vector<uint32_t>* prev = nullptr;
  for (const int32_t t : order) {
    const std::vector<uint32_t>& c = cps[static_cast<size_t>(t)];
    size_t common = 0;
    if (prev) {
      while (common < c.size() && common < prev->size() && c[common] == (*prev)[common]) ++common;
    }
    while (path.size() > common + 1) {
      nodes_[path.back()].end = static_cast<uint32_t>(nodes_.size());
      path.pop_back();
    }
    for (size_t i = common; i < c.size(); ++i) {
      path.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back({c[i], 0, 0, 0});
    }
    Node& n = nodes_[path.back()];
    if (n.count == 0) n.first = static_cast<uint32_t>(tokens_.size());
    ++n.count;
    tokens_.push_back(t);
    prev = &c;
  }
  while (!path.empty()) {
    nodes_[path.back()].end = static_cast<uint32_t>(nodes_.size());
    path.pop_back();
  }
}

bool GrammarVocab::allows(const GrammarMatcher& m, int32_t t) const {
  const std::string& b = pieces_[static_cast<size_t>(t)];
  return !b.empty() && m.allows(b);
}

// The states of one walk, numbered, and their steps by code point (-1: refused).
struct GrammarVocab::Walk {
  const GrammarMatcher& m;
  std::vector<GrammarMatcher::Stacks> states;
  std::map<GrammarMatcher::Stacks, int32_t> ids;
  std::unordered_map<uint64_t, int32_t> steps;       // non-ASCII code points
  std::vector<std::array<int32_t, 128>> ascii;      // ASCII ones (-2: not yet known)

  int32_t intern(GrammarMatcher::Stacks s) {
    if (s.empty()) return -1;
    const auto [it, added] = ids.emplace(std::move(s), static_cast<int32_t>(states.size()));
    if (added) {
      states.push_back(it->first);
      ascii.emplace_back().fill(-2);
    }
    return it->second;
  }
  int32_t step(int32_t state, uint32_t cp) {
    if (cp < 128) {
      int32_t& to = ascii[static_cast<size_t>(state)][cp];
      if (to == -2) {
        const int32_t next = intern(m.advance(states[static_cast<size_t>(state)], cp));
        ascii[static_cast<size_t>(state)][cp] = next;  // (intern may have grown `ascii`)
        return next;
      }
      return to;
    }
    const uint64_t key = (static_cast<uint64_t>(state) << 32) | cp;
    if (const auto it = steps.find(key); it != steps.end()) return it->second;
    const int32_t to = intern(m.advance(states[static_cast<size_t>(state)], cp));
    steps.emplace(key, to);
    return to;
  }
};

void GrammarVocab::visit(Walk& w, uint32_t node, int32_t state, std::vector<uint8_t>& allowed) const {
  const Node& n = nodes_[node];
  for (uint32_t i = n.first; i < n.first + n.count; ++i) {
    const auto t = static_cast<size_t>(tokens_[i]);
    const std::string_view tail = std::string_view(pieces_[t]).substr(tail_[t]);
    allowed[t] = tail.empty() || w.m.partial_ok(w.states[static_cast<size_t>(state)], tail);
  }
  for (uint32_t c = node + 1; c < n.end; c = nodes_[c].end) {
    const int32_t next = w.step(state, nodes_[c].cp);
    if (next >= 0) visit(w, c, next, allowed);
  }
}

void GrammarVocab::allowed(const GrammarMatcher& m, std::vector<uint8_t>& allowed) const {
  allowed.assign(pieces_.size(), 0);
  if (!m.pending().empty()) {  // the last token ended inside a code point: check each token
    for (size_t t = 0; t < pieces_.size(); ++t) allowed[t] = allows(m, static_cast<int32_t>(t));
    return;
  }
  // The root's own tokens are the empty ones (none: they were left out) and byte tokens that
  // start a sequence.
  Walk w{m, {}, {}, {}, {}};
  const int32_t start = w.intern(m.stacks());
  if (start >= 0) visit(w, 0, start, allowed);
}

}  // namespace qmm::llm
