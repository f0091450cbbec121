// The BPE pre-tokenizers: llama.cpp's regexes (GPT-2's, Llama 3's, Qwen 2's, GPT-4o's and its
// "default" chain), matched by hand over exact Unicode categories from libutf8proc, linear in the text.
#include <utf8proc.h>

#include "text/tokenizer.h"
#include "text/utf8.h"

namespace qmm::llm {
namespace {

// ---- Character classes of the pre-tokenizer regexes (\s, \p{L}, \p{N}) -----------------------

bool is_space(uint32_t c) {
  return (c >= 9 && c <= 13) || c == ' ' || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_number(uint32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return is_unicode_number(c);
}

bool is_letter(uint32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return is_unicode_letter(c);
}

bool is_newline(uint32_t c) { return c == '\r' || c == '\n'; }
bool is_other(uint32_t c) { return !is_space(c) && !is_letter(c) && !is_number(c); }
uint32_t lower_ascii(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// 's 't 're 've 'm 'll 'd at i (case-insensitive for Llama-3): end of the match or i.
size_t contraction(const std::vector<uint32_t>& cp, size_t i, bool ignore_case) {
  const size_t n = cp.size();
  if (cp[i] != '\'' || i + 1 >= n) return i;
  auto at = [&](size_t j) { return j < n ? (ignore_case ? lower_ascii(cp[j]) : cp[j]) : 0u; };
  const uint32_t a = at(i + 1), b = at(i + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  return i;
}

// \s+(?!\S) then \s+ at i (cp[i] is a space): the end of the match.
size_t whitespace(const std::vector<uint32_t>& cp, size_t i) {
  size_t e = i;
  while (e < cp.size() && is_space(cp[e])) ++e;
  if (e == cp.size() || e - i < 2) return e;  // at the end, or one space: \s+ takes it
  return e - 1;                               // leave the last space to prefix the next word
}

// Llama-3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//          \s*[\r\n]+|\s+(?!\S)|\s+
// Qwen 2 is the same with \p{N} (one digit per piece): max_digits 1.
size_t match_llama3(const std::vector<uint32_t>& cp, size_t i, size_t max_digits) {
  const size_t n = cp.size();
  if (size_t e = contraction(cp, i, true); e != i) return e;
  size_t j = i;
  if (!is_newline(cp[j]) && !is_letter(cp[j]) && !is_number(cp[j]) && j + 1 < n && is_letter(cp[j + 1])) ++j;
  if (is_letter(cp[j])) {
    while (j < n && is_letter(cp[j])) ++j;
    return j;
  }
  if (is_number(cp[i])) {
    j = i;
    while (j < n && j < i + max_digits && is_number(cp[j])) ++j;
    return j;
  }
  j = i;
  if (cp[j] == ' ' && j + 1 < n && is_other(cp[j + 1])) ++j;
  if (is_other(cp[j])) {
    while (j < n && is_other(cp[j])) ++j;
    while (j < n && is_newline(cp[j])) ++j;
    return j;
  }
  // cp[i] is a space here. \s*[\r\n]+ ends after the last newline of the whitespace run.
  size_t e = i, last_nl = n;
  for (; e < n && is_space(cp[e]); ++e) {
    if (is_newline(cp[e])) last_nl = e;
  }
  if (last_nl != n) return last_nl + 1;
  return whitespace(cp, i);
}

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t match_gpt2(const std::vector<uint32_t>& cp, size_t i) {
  const size_t n = cp.size();
  if (size_t e = contraction(cp, i, false); e != i) return e;
  for (bool (*cls)(uint32_t) : {is_letter, is_number, is_other}) {
    size_t j = i;
    if (cp[j] == ' ' && j + 1 < n && cls(cp[j + 1])) ++j;
    if (cls(cp[j])) {
      while (j < n && cls(cp[j])) ++j;
      return j;
    }
  }
  return whitespace(cp, i);
}

// GPT-4o (o200k) as llama.cpp runs it, its rewrite of the tokenizer.json regex where a letter is
// "upper" unless it is a-z and "lower" unless it is A-Z (so letters outside ASCII are both) and
// combining marks are not letters:
//   [^\r\n\p{L}\p{N}]?U*L+C?|[^\r\n\p{L}\p{N}]?U+L*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// with C = 's 't 're 've 'm 'll 'd in either case. U*L+ backtracks to the last position of the
// upper run (or just after it) where a lower letter starts; without one, U+L* is the upper run.
size_t match_gpt4o(const std::vector<uint32_t>& cp, size_t i) {
  const size_t n = cp.size();
  auto upper = [&](size_t j) { return j < n && is_letter(cp[j]) && !(cp[j] >= 'a' && cp[j] <= 'z'); };
  auto lower = [&](size_t j) { return j < n && is_letter(cp[j]) && !(cp[j] >= 'A' && cp[j] <= 'Z'); };
  size_t j = i;
  if (!is_newline(cp[j]) && !is_letter(cp[j]) && !is_number(cp[j]) && j + 1 < n && is_letter(cp[j + 1])) ++j;
  if (is_letter(cp[j])) {
    size_t r = j;
    while (upper(r)) ++r;
    size_t e = r;  // U+L* (no lower letter in [j, r]: the run is all A-Z)
    for (size_t k = r + 1; k-- > j;) {
      if (lower(k)) {
        for (e = k; lower(e);) ++e;
        break;
      }
    }
    return e < n ? contraction(cp, e, true) : e;
  }
  if (is_number(cp[i])) {
    for (j = i; j < n && j < i + 3 && is_number(cp[j]);) ++j;
    return j;
  }
  j = i;
  if (cp[j] == ' ' && j + 1 < n && is_other(cp[j + 1])) ++j;
  if (is_other(cp[j])) {
    while (j < n && is_other(cp[j])) ++j;
    while (j < n && (is_newline(cp[j]) || cp[j] == '/')) ++j;
    return j;
  }
  size_t e = i, last_nl = n;  // cp[i] is a space: \s*[\r\n]+ ends after the run's last newline
  for (; e < n && is_space(cp[e]); ++e) {
    if (is_newline(cp[e])) last_nl = e;
  }
  if (last_nl != n) return last_nl + 1;
  return whitespace(cp, i);
}

// llama.cpp's default pre-tokenizer: four regexes, each splitting every piece of the one before
// into its matches and the text between them:
//   [\p{P}\$\+<=>\^~\|]+   then GPT-2's   then \p{N}+   then [0-9][0-9][0-9]
// Pieces are given by their ends (indices into cp).
bool is_default_punct(uint32_t c) {
  if (c < 0x80) return std::string_view("!\"#%&'()*,-./:;?@[\\]_{}$+<=>^~|").find(static_cast<char>(c)) != std::string_view::npos;
  return is_unicode_punctuation(c);
}

// Each piece ending at `ends` split into runs of `in` and runs of the others.
std::vector<size_t> split_runs(const std::vector<uint32_t>& cp, const std::vector<size_t>& ends, bool (*in)(uint32_t)) {
  std::vector<size_t> out;
  for (size_t b = 0, k = 0; k < ends.size(); b = ends[k++]) {
    for (size_t i = b; i < ends[k];) {
      const bool run = in(cp[i]);
      while (i < ends[k] && in(cp[i]) == run) ++i;
      out.push_back(i);
    }
  }
  return out;
}

std::vector<size_t> default_pieces(const std::vector<uint32_t>& cp) {
  std::vector<size_t> ends = split_runs(cp, {cp.size()}, is_default_punct), words;
  for (size_t b = 0, k = 0; k < ends.size(); b = ends[k++]) {  // GPT-2's regex within each piece
    const std::vector<uint32_t> piece(cp.begin() + static_cast<ptrdiff_t>(b), cp.begin() + static_cast<ptrdiff_t>(ends[k]));
    for (size_t i = 0; i < piece.size();) words.push_back(b + (i = match_gpt2(piece, i)));
  }
  ends = split_runs(cp, words, is_number);
  std::vector<size_t> out;
  auto digit = [&](size_t i) { return cp[i] >= '0' && cp[i] <= '9'; };
  for (size_t b = 0, k = 0; k < ends.size(); b = ends[k++]) {  // the leftmost three ASCII digits, again after them
    size_t gap = b;
    for (size_t i = b; i + 3 <= ends[k];) {
      if (!(digit(i) && digit(i + 1) && digit(i + 2))) {
        ++i;
        continue;
      }
      if (i > gap) out.push_back(i);
      out.push_back(gap = i += 3);
    }
    if (gap < ends[k]) out.push_back(ends[k]);
  }
  return out;
}

// tokenizer.ggml.pre values of llama.cpp (src/llama-vocab.cpp) whose regexes qmm implements.
struct PreName {
  std::string_view name;
  Tokenizer::Pre pre;
};
constexpr PreName kPreNames[] = {
    {"default", Tokenizer::Pre::standard},   {"llama3", Tokenizer::Pre::llama3},   {"llama-v3", Tokenizer::Pre::llama3},
    {"llama-bpe", Tokenizer::Pre::llama3},   {"falcon3", Tokenizer::Pre::llama3},  {"pixtral", Tokenizer::Pre::llama3},
    {"qwen2", Tokenizer::Pre::qwen2},        {"deepseek-r1-qwen", Tokenizer::Pre::qwen2}, {"megrez", Tokenizer::Pre::qwen2},
    {"gpt-2", Tokenizer::Pre::gpt2},         {"phi-2", Tokenizer::Pre::gpt2},
    {"gpt-4o", Tokenizer::Pre::gpt4o},       {"llama4", Tokenizer::Pre::gpt4o},   {"kanana2", Tokenizer::Pre::gpt4o},
    {"talkie", Tokenizer::Pre::gpt4o},
};

}  // namespace

bool is_unicode_letter(uint32_t cp) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: return true;
    default: return false;
  }
}

bool is_unicode_number(uint32_t cp) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return true;
    default: return false;
  }
}

bool is_unicode_punctuation(uint32_t cp) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return true;
    default: return false;
  }
}

std::optional<Tokenizer::Pre> find_pre_tokenizer(std::string_view name) {
  if (name.empty()) return Tokenizer::Pre::standard;  // llama.cpp warns and takes "default"
  for (const PreName& p : kPreNames) {
    if (p.name == name) return p.pre;
  }
  return std::nullopt;
}

std::string supported_pre_tokenizers() {
  std::string s;
  for (const PreName& p : kPreNames) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

std::vector<std::string_view> pre_tokenize(std::string_view text, Tokenizer::Pre pre) {
  std::vector<uint32_t> cps;
  std::vector<size_t> offsets;
  decode_utf8(text, cps, offsets);
  std::vector<std::string_view> words;
  if (pre == Tokenizer::Pre::standard) {
    size_t b = 0;
    for (size_t e : default_pieces(cps)) {
      words.push_back(text.substr(offsets[b], offsets[e] - offsets[b]));
      b = e;
    }
    return words;
  }
  for (size_t i = 0; i < cps.size();) {
    const size_t e = pre == Tokenizer::Pre::gpt2    ? match_gpt2(cps, i)
                     : pre == Tokenizer::Pre::gpt4o ? match_gpt4o(cps, i)
                                                    : match_llama3(cps, i, pre == Tokenizer::Pre::qwen2 ? 1 : 3);
    words.push_back(text.substr(offsets[i], offsets[e] - offsets[i]));
    i = e;
  }
  return words;
}

}  // namespace qmm::llm
