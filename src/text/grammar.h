// GBNF grammars (llama.cpp's format) and the matcher that constrains generation to them.
//
// Grammar::parse compiles the text once into flat rules: each alternative is a run of
// elements (a character set over code points, or a reference to a rule) closed by an end
// marker; groups, literals and repetitions (* + ? {m} {m,} {m,n}) become generated rules.
// Compilation is bounded: the text, the number of elements (repetitions expand), the rules,
// and left recursion (which would never consume a character) is an error naming the rule.
//
// GrammarMatcher is the state of one generation: a set of stacks of positions (what may come
// next), advanced one code point at a time, UTF-8 aware (a token may end in the middle of a
// code point: the bytes wait for the next token). Each step is bounded: stacks are
// deduplicated and capped in number and depth, and expanding them has a work budget, so an
// ambiguous grammar fails with an Error instead of exploding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qmm::llm {

struct GrammarLimits {
  size_t max_bytes = size_t{1} << 20;     // grammar text
  size_t max_elements = size_t{1} << 20;  // after expanding repetitions
  size_t max_repeat = 10000;              // m and n of {m,n}
  size_t max_nesting = 256;               // parentheses
};

class Grammar {
 public:
  // Throws Error(invalid_argument) "grammar line L: ..." for bad or too large input, an
  // undefined rule, a missing root, or left recursion.
  static std::shared_ptr<const Grammar> parse(std::string_view gbnf, const GrammarLimits& limits = {});

  enum class Kind : uint8_t { end, chars, chars_not, rule };
  struct Elem {
    Kind kind;
    uint32_t a;  // chars: first range in ranges(); rule: the rule id
    uint32_t n;  // chars: number of ranges
  };
  struct Range {
    uint32_t lo, hi;
  };
  const std::vector<Elem>& elems() const { return elems_; }
  const std::vector<Range>& ranges() const { return ranges_; }
  // The first element of each alternative of rule r.
  const std::vector<uint32_t>& alternatives(uint32_t r) const { return rules_[r]; }
  uint32_t root() const { return root_; }
  size_t n_rules() const { return rules_.size(); }
  bool matches(const Elem& e, uint32_t cp) const;
  // Whether some code point in [lo, hi] matches.
  bool matches_any(const Elem& e, uint32_t lo, uint32_t hi) const;

 private:
  friend struct GrammarBuilder;
  std::vector<Elem> elems_;
  std::vector<Range> ranges_;
  std::vector<std::vector<uint32_t>> rules_;
  uint32_t root_ = 0;
};

class GrammarMatcher {
 public:
  static constexpr size_t kMaxStacks = 4096;
  static constexpr size_t kMaxDepth = 2048;
  static constexpr size_t kExpandBudget = 1 << 18;  // stack expansions per code point

  explicit GrammarMatcher(std::shared_ptr<const Grammar> g);

  // Feeds bytes (a token's piece). Returns false, and changes nothing, if the grammar refuses
  // them or they are not UTF-8. Throws Error when a step exceeds the work budget.
  bool accept(std::string_view bytes);
  // Whether accept(bytes) would succeed (the state is unchanged).
  bool allows(std::string_view bytes) const;
  // The grammar may end here (an end-of-generation token is allowed).
  bool complete() const;
  // Nothing more may follow (every path has ended).
  bool done() const;
  // Bytes of an incomplete code point waiting for the next token.
  const std::string& pending() const { return pending_; }

  using Stack = std::vector<uint32_t>;
  using Stacks = std::vector<Stack>;
  const Stacks& stacks() const { return stacks_; }
  const Grammar& grammar() const { return *g_; }
  // The stacks after code point cp (empty: refused).
  Stacks advance(const Stacks& from, uint32_t cp) const;
  // Whether an incomplete UTF-8 sequence (its first bytes) can continue some stack.
  bool partial_ok(const Stacks& from, std::string_view partial) const;

 private:
  void expand(Stack& s, Stacks& out, size_t& budget) const;
  bool run(std::string_view bytes, Stacks& stacks, std::string& pending) const;
  std::shared_ptr<const Grammar> g_;
  Stacks stacks_;
  std::string pending_;
};

// Decodes the complete UTF-8 code points at the start of `s` into `out`; `rest` gets the bytes
// of an incomplete last sequence. Returns false for invalid UTF-8.
bool decode_utf8_prefix(std::string_view s, std::vector<uint32_t>& out, std::string_view& rest);

}  // namespace qmm::llm
