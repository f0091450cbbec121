#include "text/synth_vocab.h"

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

namespace {

// SentencePiece vocabulary: `specials` (text, type) first, then (unless bytes_after) the byte
// tokens, `runs` (whitespace runs, scored above the pieces), the characters and the pieces; with
// `tail` special tokens appended after the pieces (Phi-3's added tokens).
SynthVocab spm_vocab(size_t size, uint64_t seed, const std::vector<std::pair<std::string, int32_t>>& specials,
                     const std::vector<std::string>& extra_chars, bool runs,
                     const std::vector<std::pair<std::string, int32_t>>& tail) {
  const std::string kSpace = "\xe2\x96\x81";  // U+2581 "▁"
  std::vector<std::string> chars;
  for (const char* c = kLetters; *c; ++c) chars.push_back(std::string(1, *c));
  for (const char* c = kLetters; *c; ++c) chars.push_back(std::string(1, static_cast<char>(*c - 'a' + 'A')));
  for (const char* c = "0123456789.,!?'\"-:;()"; *c; ++c) chars.push_back(std::string(1, *c));
  for (const std::string& c : extra_chars) chars.push_back(c);
  const size_t n_runs = runs ? 3 * 15 : 0;
  const size_t fixed = specials.size() + 256 + 1 + chars.size() + n_runs + tail.size();
  check_arg(size >= fixed + 16, "a llama vocabulary needs at least " + std::to_string(fixed + 16) + " tokens");

  SynthVocab v;
  v.model = "llama";
  auto add = [&](const std::string& t, float score, int32_t type) {
    v.tokens.push_back(t);
    v.scores.push_back(score);
    v.token_type.push_back(type);
  };
  for (const auto& [t, type] : specials) add(t, 0.0f, type);
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
  // Runs of 2..16 spaces, newlines and tabs (each reachable from the run one shorter).
  for (const std::string& unit : {kSpace, std::string("\n"), std::string("\t")}) {
    std::string r = unit;
    for (size_t i = 0; runs && i < 15; ++i) {
      r += unit;
      add(r, score -= 0.01f, 1);
      seen.insert(r);
    }
  }
  for (const std::string& c : chars) starts.push_back(c);  // a word may also start without "▁"
  Rng rng{seed ^ 0x5eedull};
  grow(starts, conts, size - v.tokens.size() - tail.size(), 24, rng, seen,
       [&](const std::string&, const std::string&, const std::string& tok) { add(tok, score -= 0.01f, 1); });
  for (const auto& [t, type] : tail) add(t, 0.0f, type);
  return v;
}

}  // namespace

SynthVocab make_spm_vocab(size_t size, uint64_t seed) {
  SynthVocab v = spm_vocab(size, seed, {{"<unk>", 2}, {"<s>", 3}, {"</s>", 3}}, {}, false, {});
  v.bos = 1, v.eos = 2, v.unk = 0, v.has_unk = true;
  return v;
}

namespace {

// Byte-level BPE: the 256 byte symbols, merges, then `specials` (text, type) and [PADn] unused
// tokens up to `size`. `extra_conts` are symbols words may continue with besides the letters.
SynthVocab bpe_vocab(size_t size, uint64_t seed, size_t n_special, const std::vector<std::string>& extra_conts,
                     const std::vector<std::pair<std::string, int32_t>>& specials) {
  check_arg(size >= 256 + n_special + 1, "a gpt2 vocabulary needs at least " + std::to_string(256 + n_special + 1) + " tokens");
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
  for (const std::string& c : extra_conts) {
    starts.push_back(c);
    conts.push_back(c);
  }
  Rng rng{seed ^ 0xb9eull};
  grow(starts, conts, size - n_special - 256, 32, rng, seen,
       [&](const std::string& l, const std::string& r, const std::string& tok) {
         v.merges.push_back(l + " " + r);
         v.tokens.push_back(tok);
         v.token_type.push_back(1);
       });
  for (const auto& [t, type] : specials) {
    v.tokens.push_back(t);
    v.token_type.push_back(type);
  }
  while (v.tokens.size() < size) {
    v.tokens.push_back("[PAD" + std::to_string(v.tokens.size()) + "]");
    v.token_type.push_back(5);
  }
  return v;
}

}  // namespace

SynthVocab make_bpe_vocab(size_t size, uint64_t seed) {
  // Llama 3's special tokens: 256 control tokens at the end.
  std::vector<std::pair<std::string, int32_t>> specials;
  for (const char* s : {"<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                        "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
                        "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"}) {
    specials.emplace_back(s, 3);
  }
  for (size_t r = 3; specials.size() < 256; ++r) specials.emplace_back("<|reserved_special_token_" + std::to_string(r) + "|>", 3);
  SynthVocab v = bpe_vocab(size, seed, 256, {}, specials);
  const size_t first = size - 256;
  v.pre = "llama-bpe";
  v.bos = static_cast<uint32_t>(first);
  v.eos = static_cast<uint32_t>(first + 9);  // <|eot_id|>, as Llama 3.x Instruct
  return v;
}

SynthVocab make_vocab(VocabFlavor flavor, size_t size, uint64_t seed) {
  const std::vector<std::string> accents_cjk = {"\xc3\xa9", "\xc3\xbc", "\xc3\xa8", "\xe6\x97\xa5", "\xe6\x9c\xac", "\xe8\xaa\x9e", "\xe2\x80\x94"};
  switch (flavor) {
    case VocabFlavor::llama: return make_spm_vocab(size, seed);
    case VocabFlavor::llama3: return make_bpe_vocab(size, seed);
    case VocabFlavor::gemma: {
      SynthVocab v = spm_vocab(size, seed,
                               {{"<pad>", 3}, {"<eos>", 3}, {"<bos>", 3}, {"<unk>", 2}, {"<mask>", 4}, {"[@BOS@]", 3},
                                {"<start_of_turn>", 3}, {"<end_of_turn>", 3}, {"<start_of_image>", 3}, {"<end_of_image>", 3}},
                               accents_cjk, true, {});
      v.bos = 2, v.eos = 1, v.unk = 3, v.has_unk = true;
      v.add_space_prefix = false;
      return v;
    }
    case VocabFlavor::phi3: {
      std::vector<std::pair<std::string, int32_t>> tail = {{"<|endoftext|>", 3}, {"<|assistant|>", 3}};
      for (int i = 1; i <= 4; ++i) tail.emplace_back("<|placeholder" + std::to_string(i) + "|>", 3);
      for (const char* s : {"<|system|>", "<|end|>", "<|placeholder5|>", "<|placeholder6|>", "<|user|>"}) tail.emplace_back(s, 3);
      for (int i = 7; tail.size() < 64; ++i) tail.emplace_back("<|placeholder" + std::to_string(i) + "|>", 3);
      SynthVocab v = spm_vocab(size, seed, {{"<unk>", 2}, {"<s>", 3}, {"</s>", 3}}, accents_cjk, false, tail);
      v.bos = 1, v.unk = 0, v.has_unk = true;
      v.eos = static_cast<uint32_t>(size - 64);  // <|endoftext|>
      return v;
    }
    case VocabFlavor::qwen2:
    case VocabFlavor::qwen3: {
      std::vector<std::pair<std::string, int32_t>> specials;
      for (const char* s : {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
                            "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
                            "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"}) {
        specials.emplace_back(s, 3);
      }
      specials.emplace_back("<tool_call>", 4);
      specials.emplace_back("</tool_call>", 4);
      for (const char* s : {"<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"}) {
        specials.emplace_back(s, 3);
      }
      if (flavor == VocabFlavor::qwen3) {
        for (const char* s : {"<tool_response>", "</tool_response>", "<think>", "</think>"}) specials.emplace_back(s, 4);
      }
      specials.emplace_back("</s>", 1);  // a normal token that llama.cpp makes control and end of generation by its text
      const size_t n_pad = size > 1000 ? 256 : 8;  // (the real vocabularies end with [PADn] tokens)
      std::vector<std::string> conts = {gpt2_byte_symbol(' '), gpt2_byte_symbol('\n'), ".", ",", "!", "'"};
      for (char d = '0'; d <= '9'; ++d) conts.emplace_back(1, d);
      SynthVocab v = bpe_vocab(size, seed, specials.size() + n_pad, conts, specials);
      v.pre = "qwen2";
      v.add_bos = false;
      for (size_t i = 0; i < v.tokens.size(); ++i) {
        if (v.tokens[i] == "<|endoftext|>") v.bos = static_cast<uint32_t>(i);
        if (v.tokens[i] == "<|im_end|>") v.eos = static_cast<uint32_t>(i);
      }
      return v;
    }
  }
  fail(Status::internal, "unknown vocabulary flavour");
}

}  // namespace qmm::gguf
