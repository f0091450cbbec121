// The grammar matcher (see grammar.h): stacks of element positions, the top of each a
// character set (or the stack empty: the grammar has ended on that path).
#include "text/grammar.h"

#include <algorithm>

#include "core/error.h"

namespace qmm::llm {

bool decode_utf8_prefix(std::string_view s, std::vector<uint32_t>& out, std::string_view& rest) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      len = 1, cp = c;
    } else if (c >= 0xC2 && c < 0xE0) {
      len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c < 0xF0) {
      len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c < 0xF5) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) {  // incomplete: its continuation bytes so far must be valid
      for (size_t k = i + 1; k < s.size(); ++k) {
        if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) return false;
      }
      rest = s.substr(i);
      return true;
    }
    for (size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    const uint32_t min = len == 1 ? 0 : len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    out.push_back(cp);
    i += len;
  }
  rest = {};
  return true;
}

bool Grammar::matches(const Elem& e, uint32_t cp) const {
  bool in = false;
  for (uint32_t i = e.a; i < e.a + e.n && !in; ++i) in = ranges_[i].lo <= cp && cp <= ranges_[i].hi;
  return in != (e.kind == Kind::chars_not);
}

bool Grammar::matches_any(const Elem& e, uint32_t lo, uint32_t hi) const {
  if (e.kind == Kind::chars) {
    for (uint32_t i = e.a; i < e.a + e.n; ++i) {
      if (ranges_[i].lo <= hi && lo <= ranges_[i].hi) return true;
    }
    return false;
  }
  // A negated set misses [lo, hi] only when its ranges cover all of it.
  std::vector<Range> r(ranges_.begin() + e.a, ranges_.begin() + e.a + e.n);
  std::sort(r.begin(), r.end(), [](const Range& x, const Range& y) { return x.lo < y.lo; });
  uint32_t next = lo;
  for (const Range& x : r) {
    if (x.lo > next) return true;
    if (x.hi >= next) {
      if (x.hi >= hi) return false;
      next = x.hi + 1;
    }
  }
  return next <= hi;
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> g) : g_(std::move(g)) {
  size_t budget = kExpandBudget;
  for (const uint32_t alt : g_->alternatives(g_->root())) {
    Stack s;
    if (g_->elems()[alt].kind != Grammar::Kind::end) s.push_back(alt);
    expand(s, stacks_, budget);
  }
  std::sort(stacks_.begin(), stacks_.end());
  stacks_.erase(std::unique(stacks_.begin(), stacks_.end()), stacks_.end());
}

// Replaces rule references at the top of `s` by each alternative of the rule, until every
// stack's top is a character set (or the stack is empty), appending them to `out`.
void GrammarMatcher::expand(Stack& s, Stacks& out, size_t& budget) const {
  if (budget-- == 0) {
    fail(Status::invalid_argument, "the grammar is too ambiguous: one character has more than " +
                                       std::to_string(kExpandBudget) + " ways to continue");
  }
  if (s.empty() || g_->elems()[s.back()].kind != Grammar::Kind::rule) {
    if (out.size() < kMaxStacks) out.push_back(s);
    return;
  }
  if (s.size() > kMaxDepth) return;  // nested too deep: this path ends
  const auto& el = g_->elems();
  const uint32_t at = s.back();
  s.pop_back();
  if (el[at + 1].kind != Grammar::Kind::end) s.push_back(at + 1);
  const size_t base = s.size();
  for (const uint32_t alt : g_->alternatives(el[at].a)) {
    s.resize(base);
    if (el[alt].kind != Grammar::Kind::end) s.push_back(alt);
    expand(s, out, budget);
  }
  s.resize(base);
  if (el[at + 1].kind != Grammar::Kind::end) s.back() = at;  // restore the caller's stack
  else s.push_back(at);
}

GrammarMatcher::Stacks GrammarMatcher::advance(const Stacks& from, uint32_t cp) const {
  Stacks out;
  size_t budget = kExpandBudget;
  const auto& el = g_->elems();
  Stack s;
  for (const Stack& st : from) {
    if (st.empty() || !g_->matches(el[st.back()], cp)) continue;
    s.assign(st.begin(), st.end() - 1);
    if (el[st.back() + 1].kind != Grammar::Kind::end) s.push_back(st.back() + 1);
    expand(s, out, budget);
  }
  if (out.size() > 1) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

bool GrammarMatcher::partial_ok(const Stacks& from, std::string_view partial) const {
  // The code points an incomplete sequence can still become.
  const auto c = static_cast<unsigned char>(partial[0]);
  const size_t len = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  uint32_t lo = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07), hi = lo;
  for (size_t k = 1; k < len; ++k) {
    const uint32_t b = k < partial.size() ? static_cast<unsigned char>(partial[k]) & 0x3F : 0;
    lo = (lo << 6) | b;
    hi = (hi << 6) | (k < partial.size() ? b : 0x3F);
  }
  lo = std::max<uint32_t>(lo, len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000);  // the shortest form
  hi = std::min<uint32_t>(hi, 0x10FFFF);
  if (lo > hi) return false;
  for (const Stack& st : from) {
    if (!st.empty() && g_->matches_any(g_->elems()[st.back()], lo, hi)) return true;
  }
  return false;
}

bool GrammarMatcher::run(std::string_view bytes, Stacks& stacks, std::string& pending) const {
  std::string joined;
  if (!pending.empty()) {
    joined = pending + std::string(bytes);
    bytes = joined;
  }
  std::vector<uint32_t> cps;
  std::string_view rest;
  if (!decode_utf8_prefix(bytes, cps, rest)) return false;
  for (const uint32_t cp : cps) {
    stacks = advance(stacks, cp);
    if (stacks.empty()) return false;
  }
  if (!rest.empty() && !partial_ok(stacks, rest)) return false;
  pending.assign(rest);
  return true;
}

bool GrammarMatcher::accept(std::string_view bytes) {
  Stacks stacks = stacks_;
  std::string pending = pending_;
  if (!run(bytes, stacks, pending)) return false;
  stacks_ = std::move(stacks);
  pending_ = std::move(pending);
  return true;
}

bool GrammarMatcher::allows(std::string_view bytes) const {
  Stacks stacks = stacks_;
  std::string pending = pending_;
  return run(bytes, stacks, pending);
}

bool GrammarMatcher::complete() const {
  return pending_.empty() && std::any_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

bool GrammarMatcher::done() const {
  return pending_.empty() && std::all_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

}  // namespace qmm::llm
