#include "llm/synth_vocab.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "core/error.h"

namespace qmm::gguf {

namespace {

// splitmix64: a small, fast, well-mixed generator.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  // Skewed towards 0 (density ~ x^-2/3): early entries — frequent letters, short pieces — win.
  size_t skewed(size_t n) {
    const double u = static_cast<double>(next() >> 11) * 0x1p-53;
    return std::min(n - 1, static_cast<size_t>(static_cast<double>(n) * u * u * u));
  }
};

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

const char kLetters[] = "etaoinshrdlucmfwypvbgkjqxz";

// Grows `pieces` (tokens made of `alphabet` symbols) to `target` entries by joining a word
// start or word piece with a continuation piece; each new token's parts are earlier tokens.
// `on_new(left, right)` is called for every new token.
template <class OnNew>
void grow(std::vector<std::string>& starts, std::vector<std::string>& conts, size_t target, size_t max_bytes, Rng& rng,
          std::unordered_set<std::string>& seen, OnNew on_new) {
  size_t made = 0, attempts = 0;
  while (made < target) {
    if (++attempts > 200 * (target + 100)) fail(Status::internal, "synthetic vocabulary: cannot make enough tokens");
    // Join a word start (or a piece) with a continuation, both skewed to early entries: the
    // letters are in English frequency order, so pieces like "th", "▁t", "▁the" come first.
    const bool word = rng.below(2) == 0;
    std::vector<std::string>& from = word ? starts : conts;
    const std::string& left = from[rng.skewed(from.size())];
    const std::string& right = conts[rng.skewed(conts.size())];
    std::string tok = left + right;
    if (tok.size() > max_bytes || !seen.insert(tok).second) continue;
    on_new(left, right, tok);
    (word ? starts : conts).push_back(tok);
    ++made;
  }
}

}  // namespace

std::string gpt2_byte_symbol(uint8_t b) {
  // Printable ranges map to themselves; the other bytes to 256, 257, ... in byte order.
  auto printable = [](int c) { return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255); };
  if (printable(b)) return utf8(b);
  uint32_t n = 0;
  for (int c = 0; c < b; ++c) n += printable(c) ? 0 : 1;
  return utf8(256 + n);
}

SynthVocab make_spm_vocab(size_t size, uint64_t seed) {
  const std::string kSpace = "\xe2\x96\x81";  // U+2581 "▁"
  std::vector<std::string> chars;
  for (const char* c = kLetters; *c; ++c) chars.push_back(std::string(1, *c));
  for (const char* c = kLetters; *c; ++c) chars.push_back(std::string(1, static_cast<char>(*c - 'a' + 'A')));
  for (const char* c = "0123456789.,!?'\"-:;()"; *c; ++c) chars.push_back(std::string(1, *c));
  const size_t fixed = 3 + 256 + 1 + chars.size();
  check_arg(size >= fixed, "a llama vocabulary needs at least " + std::to_string(fixed) + " tokens");

  SynthVocab v;
  v.model = "llama";
  v.bos = 1, v.eos = 2, v.unk = 0, v.has_unk = true;
  auto add = [&](const std::string& t, float score, int32_t type) {
    v.tokens.push_back(t);
    v.scores.push_back(score);
    v.token_type.push_back(type);
  };
  add("<unk>", 0.0f, 2);
  add("<s>", 0.0f, 3);
  add("</s>", 0.0f, 3);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 0.0f, 6);
  }
  std::unordered_set<std::string> seen;
  std::vector<std::string> starts, conts;
  float score = -1.0f;
  add(kSpace, score, 1);
  seen.insert(kSpace);
  starts.push_back(kSpace);
  for (const std::string& c : chars) {
    add(c, score -= 0.01f, 1);
    seen.insert(c);
    conts.push_back(c);
  }
  for (const std::string& c : chars) starts.push_back(c);  // a word may also start without "▁"
  Rng rng{seed ^ 0x5eedull};
  grow(starts, conts, size - v.tokens.size(), 24, rng, seen,
       [&](const std::string&, const std::string&, const std::string& tok) { add(tok, score -= 0.01f, 1); });
  return v;
}

SynthVocab make_bpe_vocab(size_t size, uint64_t seed) {
  constexpr size_t kSpecial = 256;
  check_arg(size >= 256 + kSpecial + 1, "a gpt2 vocabulary needs at least 513 tokens");
  SynthVocab v;
  v.model = "gpt2";
  std::unordered_set<std::string> seen;
  std::vector<std::string> starts, conts;
  for (int b = 0; b < 256; ++b) {
    const std::string s = gpt2_byte_symbol(static_cast<uint8_t>(b));
    v.tokens.push_back(s);
    v.token_type.push_back(1);
    seen.insert(s);
  }
  const std::string kSpace = gpt2_byte_symbol(' ');  // "Ġ"
  starts.push_back(kSpace);
  for (const char* c = kLetters; *c; ++c) {
    starts.push_back(std::string(1, *c));
    conts.push_back(std::string(1, *c));
  }
  Rng rng{seed ^ 0xb9eull};
  grow(starts, conts, size - kSpecial - 256, 32, rng, seen,
       [&](const std::string& l, const std::string& r, const std::string& tok) {
         v.merges.push_back(l + " " + r);
         v.tokens.push_back(tok);
         v.token_type.push_back(1);
       });
  // Llama 3's special tokens.
  const size_t first = v.tokens.size();
  const char* named[] = {"<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                         "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
                         "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"};
  for (const char* s : named) v.tokens.push_back(s);
  for (size_t r = 3; v.tokens.size() < size; ++r) v.tokens.push_back("<|reserved_special_token_" + std::to_string(r) + "|>");
  v.token_type.resize(v.tokens.size(), 3);
  v.bos = static_cast<uint32_t>(first);
  v.eos = static_cast<uint32_t>(first + 9);  // <|eot_id|>, as Llama 3.x Instruct
  return v;
}

}  // namespace qmm::gguf
