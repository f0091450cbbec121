// GBNF text -> Grammar (see grammar.h). The syntax, as llama.cpp reads it:
//   name ::= alternative | alternative ...      one rule; `root` is where generation starts
//   "literal"  [a-z0-9_]  [^"\\]  .  name  ( group )      with * + ? {m} {m,} {m,n} after any of them
//   escapes \n \r \t \\ \" \[ \] \- \xHH \uHHHH \UHHHHHHHH;  # comments to the end of the line
// A rule ends at a newline outside parentheses, except after `::=` or `|` (or before a line
// that starts with `|`).
#include <algorithm>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "text/grammar.h"

namespace qmm::llm {

struct GrammarBuilder {
  using Seq = std::vector<Grammar::Elem>;
  using Alts = std::vector<Seq>;

  GrammarBuilder(std::string_view text, const GrammarLimits& limits) : src(text), lim(limits) {}
  std::string_view src;
  const GrammarLimits& lim;
  size_t pos = 0, nesting = 0, elements = 0;
  std::vector<std::string> names;
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<bool> defined;
  std::vector<Alts> rules;
  std::vector<Grammar::Range> ranges;

  [[noreturn]] void error(const std::string& what) const {
    const size_t line = 1 + static_cast<size_t>(std::count(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(std::min(pos, src.size())), '\n'));
    fail(Status::invalid_argument, "grammar line " + std::to_string(line) + ": " + what);
  }
  bool at_end() const { return pos >= src.size(); }
  char peek() const { return at_end() ? '\0' : src[pos]; }
  static bool word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  }

  // Spaces and comments; newlines too when `newlines`.
  void space(bool newlines) {
    while (!at_end()) {
      const char c = src[pos];
      if (c == '#') {
        while (!at_end() && src[pos] != '\n') ++pos;
      } else if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
        ++pos;
      } else if (!newlines && (c == '\n' || c == '\r')) {
        // A line that continues the rule with `|`.
        size_t p = pos;
        while (p < src.size() && (src[p] == ' ' || src[p] == '\t' || src[p] == '\n' || src[p] == '\r')) ++p;
        if (p < src.size() && src[p] == '|') {
          pos = p;
        }
        return;
      } else {
        return;
      }
    }
  }

  void count(size_t n) {
    elements += n;
    if (elements > lim.max_elements) {
      error("the grammar expands to more than " + std::to_string(lim.max_elements) + " elements");
    }
  }

  uint32_t rule_id(const std::string& name) {
    if (const auto it = ids.find(name); it != ids.end()) return it->second;
    const auto id = static_cast<uint32_t>(rules.size());
    if (id > lim.max_elements) error("too many rules");
    ids.emplace(name, id);
    names.push_back(name);
    defined.push_back(false);
    rules.emplace_back();
    return id;
  }
  uint32_t new_rule(const std::string& base, Alts alts) {
    const uint32_t id = rule_id(base + "#" + std::to_string(rules.size()));
    defined[id] = true;
    rules[id] = std::move(alts);
    return id;
  }

  std::string name() {
    const size_t b = pos;
    while (!at_end() && word_char(src[pos])) ++pos;
    if (pos == b) error(at_end() ? "expected a rule name at the end" : std::string("expected a rule name at '") + src[pos] + "'");
    return std::string(src.substr(b, pos - b));
  }

  uint32_t hex(size_t digits) {
    uint32_t v = 0;
    for (size_t i = 0; i < digits; ++i, ++pos) {
      const char c = peek();
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) error("expected " + std::to_string(digits) + " hex digits in an escape");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    if (v > 0x10FFFF) error("escape beyond U+10FFFF");
    return v;
  }

  // One code point of a literal or class (escapes decoded); pos moves past it.
  uint32_t code_point() {
    if (at_end()) error("unterminated literal or character class");
    const auto c = static_cast<unsigned char>(src[pos]);
    if (c == '\\') {
      ++pos;
      const char e = peek();
      ++pos;
      switch (e) {
        case 'n': return '\n';
        case 'r': return '\r';
        case 't': return '\t';
        case '\\': case '"': case '[': case ']': case '-': case '^': case '\'': return static_cast<unsigned char>(e);
        case 'x': return hex(2);
        case 'u': return hex(4);
        case 'U': return hex(8);
        default: --pos; error(std::string("unknown escape '\\") + e + "'");
      }
    }
    std::vector<uint32_t> cp;
    std::string_view rest;
    const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (!decode_utf8_prefix(src.substr(pos, len), cp, rest) || cp.size() != 1) error("invalid UTF-8 in the grammar");
    pos += len;
    return cp[0];
  }

  void literal(Seq& out) {
    ++pos;  // "
    while (peek() != '"') {
      if (at_end() || peek() == '\n') error("unterminated string literal");
      const uint32_t cp = code_point();
      out.push_back({Grammar::Kind::chars, static_cast<uint32_t>(ranges.size()), 1});
      ranges.push_back({cp, cp});
      count(1);
    }
    ++pos;
  }

  void char_class(Seq& out) {
    ++pos;  // [
    bool negate = false;
    if (peek() == '^') {
      negate = true;
      ++pos;
    }
    const auto first = static_cast<uint32_t>(ranges.size());
    while (peek() != ']') {
      if (at_end() || peek() == '\n') error("unterminated character class");
      const uint32_t lo = code_point();
      uint32_t hi = lo;
      if (peek() == '-' && pos + 1 < src.size() && src[pos + 1] != ']') {
        ++pos;
        hi = code_point();
        if (hi < lo) error("character range with its end before its start");
      }
      ranges.push_back({lo, hi});
      count(1);
    }
    ++pos;
    out.push_back({negate ? Grammar::Kind::chars_not : Grammar::Kind::chars, first, static_cast<uint32_t>(ranges.size() - first)});
  }

  size_t number() {
    const size_t b = pos;
    size_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = std::min<size_t>(v * 10 + static_cast<size_t>(peek() - '0'), lim.max_repeat + 1);
      ++pos;
    }
    if (pos == b) error("expected a number in {m,n}");
    if (v > lim.max_repeat) error("a repetition count above " + std::to_string(lim.max_repeat));
    return v;
  }

  // `unit` repeated min..max times (max = SIZE_MAX: unbounded), appended to `out`.
  void repeat(Seq& out, const Seq& unit, size_t min, size_t max) {
    for (size_t i = 0; i < min; ++i) {
      count(unit.size());
      out.insert(out.end(), unit.begin(), unit.end());
    }
    if (max == SIZE_MAX) {  // R ::= unit R |
      const uint32_t r = rule_id("rep#" + std::to_string(rules.size()));
      defined[r] = true;
      Seq again = unit;
      again.push_back({Grammar::Kind::rule, r, 0});
      count(again.size());
      rules[r] = Alts{again, Seq{}};
      out.push_back({Grammar::Kind::rule, r, 0});
      return;
    }
    if (max == min) return;
    // unit{0,k}: O1 ::= unit | , Ok ::= unit O(k-1) |
    uint32_t inner = UINT32_MAX;
    for (size_t k = 0; k < max - min; ++k) {
      Seq s = unit;
      if (inner != UINT32_MAX) s.push_back({Grammar::Kind::rule, inner, 0});
      count(s.size());
      inner = new_rule("opt", Alts{s, Seq{}});
    }
    out.push_back({Grammar::Kind::rule, inner, 0});
  }

  Seq sequence(bool nested) {
    Seq seq;
    size_t unit_start = SIZE_MAX;
    while (!at_end()) {
      const char c = peek();
      const size_t before = seq.size();
      if (c == '"') {
        literal(seq);
      } else if (c == '[') {
        char_class(seq);
      } else if (c == '.') {
        ++pos;
        seq.push_back({Grammar::Kind::chars_not, 0, 0});
        count(1);
      } else if (c == '(') {
        ++pos;
        if (++nesting > lim.max_nesting) error("parentheses nested deeper than " + std::to_string(lim.max_nesting));
        space(true);
        Alts alts = alternatives(true);
        if (peek() != ')') error("expected ')'");
        ++pos;
        --nesting;
        seq.push_back({Grammar::Kind::rule, new_rule("group", std::move(alts)), 0});
        count(1);
      } else if (word_char(c)) {
        const std::string n = name();
        seq.push_back({Grammar::Kind::rule, rule_id(n), 0});
        count(1);
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (unit_start == SIZE_MAX) error(std::string("'") + c + "' follows nothing");
        ++pos;
        size_t min = c == '+' ? 1 : 0, max = c == '?' ? 1 : SIZE_MAX;
        if (c == '{') {
          space(false);
          min = number();
          space(false);
          max = min;
          if (peek() == ',') {
            ++pos;
            space(false);
            max = peek() == '}' ? SIZE_MAX : number();
            if (max < min) error("{m,n} with n < m");
            space(false);
          }
          if (peek() != '}') error("expected '}'");
          ++pos;
        }
        const Seq unit(seq.begin() + static_cast<std::ptrdiff_t>(unit_start), seq.end());
        seq.resize(unit_start);
        repeat(seq, unit, min, max);
        unit_start = SIZE_MAX;  // x** is an error, as in llama.cpp
        space(nested);
        continue;
      } else {
        break;
      }
      unit_start = before;
      space(nested);
    }
    return seq;
  }

  Alts alternatives(bool nested) {
    Alts alts;
    alts.push_back(sequence(nested));
    while (peek() == '|') {
      ++pos;
      space(true);
      alts.push_back(sequence(nested));
    }
    return alts;
  }

  void parse() {
    if (src.size() > lim.max_bytes) {
      fail(Status::invalid_argument, "the grammar is larger than " + std::to_string(lim.max_bytes) + " bytes");
    }
    space(true);
    while (!at_end()) {
      const std::string n = name();
      space(false);
      if (src.substr(pos, 3) != "::=") error("expected '::=' after '" + n + "'");
      pos += 3;
      space(true);
      const uint32_t id = rule_id(n);
      if (defined[id]) error("rule '" + n + "' is defined twice");
      Alts alts = alternatives(false);
      defined[id] = true;
      rules[id] = std::move(alts);
      if (!at_end() && peek() != '\n' && peek() != '\r') error(std::string("unexpected '") + peek() + "'");
      space(true);
    }
  }

  // Rules that can match the empty string, then left recursion: a rule reachable from itself
  // through rules at the start of alternatives (after nullable ones) would never consume.
  void check() {
    pos = src.size();
    for (size_t i = 0; i < rules.size(); ++i) {
      if (!defined[i]) error("rule '" + names[i] + "' is used but not defined");
    }
    if (!ids.count("root")) error("no 'root' rule");
    std::vector<bool> nullable(rules.size(), false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < rules.size(); ++r) {
        if (nullable[r]) continue;
        for (const Seq& s : rules[r]) {
          if (std::all_of(s.begin(), s.end(), [&](const Grammar::Elem& e) { return e.kind == Grammar::Kind::rule && nullable[e.a]; })) {
            nullable[r] = changed = true;
            break;
          }
        }
      }
    }
    // Depth-first search for a cycle of "starts with" edges (0 new, 1 on the path, 2 done).
    std::vector<uint8_t> mark(rules.size(), 0);
    std::vector<std::pair<uint32_t, size_t>> path;  // rule, next edge
    auto edges = [&](uint32_t r) {
      std::vector<uint32_t> out;
      for (const Seq& s : rules[r]) {
        for (const Grammar::Elem& e : s) {
          if (e.kind != Grammar::Kind::rule) break;
          out.push_back(e.a);
          if (!nullable[e.a]) break;
        }
      }
      return out;
    };
    for (uint32_t start = 0; start < rules.size(); ++start) {
      if (mark[start]) continue;
      std::vector<std::vector<uint32_t>> pending{edges(start)};
      path.assign(1, {start, 0});
      mark[start] = 1;
      while (!path.empty()) {
        auto& [r, next] = path.back();
        if (next == pending.back().size()) {
          mark[r] = 2;
          path.pop_back();
          pending.pop_back();
          continue;
        }
        const uint32_t to = pending.back()[next++];
        if (mark[to] == 1) error("rule '" + names[to] + "' is left-recursive (it can reach itself without consuming a character)");
        if (mark[to] == 0) {
          mark[to] = 1;
          path.push_back({to, 0});
          pending.push_back(edges(to));
        }
      }
    }
  }

  std::shared_ptr<const Grammar> build() {
    auto g = std::make_shared<Grammar>();
    g->ranges_ = std::move(ranges);
    g->rules_.resize(rules.size());
    for (size_t r = 0; r < rules.size(); ++r) {
      for (const Seq& s : rules[r]) {
        g->rules_[r].push_back(static_cast<uint32_t>(g->elems_.size()));
        g->elems_.insert(g->elems_.end(), s.begin(), s.end());
        g->elems_.push_back({Grammar::Kind::end, 0, 0});
      }
    }
    g->root_ = ids.at("root");
    return g;
  }
};

std::shared_ptr<const Grammar> Grammar::parse(std::string_view gbnf, const GrammarLimits& limits) {
  GrammarBuilder b(gbnf, limits);
  b.parse();
  b.check();
  std::shared_ptr<const Grammar> g = b.build();
  GrammarMatcher probe(g);  // the first expansion: a grammar too ambiguous to start fails here
  if (probe.stacks().empty()) fail(Status::invalid_argument, "grammar: the root rule matches nothing");
  return g;
}

}  // namespace qmm::llm
