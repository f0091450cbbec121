#include "text/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <queue>

#include "core/error.h"
#include "gguf/gguf.h"
#include "text/utf8.h"

namespace qmm::llm {
namespace {

// ---- GPT-2 byte <-> unicode ----------------------------------------------------------------

// Printable bytes map to themselves; the others to 256, 257, ... in byte order.
struct ByteUnicode {
  std::string byte_to_text[256];
  int16_t cp_to_byte[324];
  ByteUnicode() {
    std::fill(std::begin(cp_to_byte), std::end(cp_to_byte), int16_t{-1});
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      const uint32_t cp = printable ? b : next++;
      append_utf8(byte_to_text[b], cp);
      cp_to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};
const ByteUnicode& byte_unicode() {
  static const ByteUnicode t;
  return t;
}

// The byte of an SPM byte-fallback token "<0xXX>", or -1.
int byte_token_value(std::string_view t) {
  if (t.size() != 6 || !t.starts_with("<0x") || t[5] != '>') return -1;
  int v = 0;
  for (char c : t.substr(3, 2)) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // ▁

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, from.size()) == from) {
      out += to;
      i += from.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

constexpr uint8_t kLstrip = 1, kRstrip = 2;

}  // namespace

// ---- Construction ----------------------------------------------------------------------------

void Tokenizer::index(std::string_view model_name) {
  check_arg(!tokens_.empty(), "the tokenizer has no tokens");
  check_arg(tokens_.size() < (size_t{1} << 31), "too many tokens");
  if (types_.empty()) {  // all normal, and <0xXX> are byte tokens for SPM
    types_.assign(tokens_.size(), static_cast<int32_t>(TokenType::normal));
    for (size_t i = 0; kind_ == Kind::spm && i < tokens_.size(); ++i) {
      if (byte_token_value(tokens_[i]) >= 0) types_[i] = static_cast<int32_t>(TokenType::byte);
    }
  }
  if (scores_.size() != tokens_.size()) scores_.resize(tokens_.size(), 0.0f);
  ids_.clear();
  ids_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) ids_.emplace(tokens_[i], static_cast<int32_t>(i));  // first wins
  auto valid = [&](int32_t id) { return id >= 0 && static_cast<size_t>(id) < tokens_.size() ? id : -1; };
  bos_ = valid(bos_);
  eos_ = valid(eos_);
  eot_ = valid(eot_);
  eom_ = valid(eom_);
  for (int32_t& id : fim_) id = valid(id);
  unk_ = valid(unk_);
  find_end_of_generation();  // (marks end-of-generation, FIM and end-of-turn tokens as control, as llama.cpp does)

  std::fill(std::begin(byte_tokens_), std::end(byte_tokens_), -1);
  specials_.clear();
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const auto t = static_cast<TokenType>(types_[i]);
    const bool special = t == TokenType::control || t == TokenType::user_defined || t == TokenType::unknown;
    if (special && !tokens_[i].empty()) specials_.push_back(static_cast<int32_t>(i));
    if (const int b = byte_token_value(tokens_[i]); kind_ == Kind::spm && b >= 0 && byte_tokens_[b] < 0) {
      byte_tokens_[b] = static_cast<int32_t>(i);
    }
  }
  // Longest first, ids in order among equals (std::sort with a tie-break: clang-19 -Werror rejects
  // the deprecated get_temporary_buffer inside libstdc++ 12's stable_sort).
  std::sort(specials_.begin(), specials_.end(), [&](int32_t a, int32_t b) {
    const size_t la = text(a).size(), lb = text(b).size();
    return la != lb ? la > lb : a < b;
  });
  // llama.cpp: in Phi-3 models (by general.name) special tokens eat the whitespace after them,
  // except <unk>, <s> and <|endoftext|>; </s> does too.
  std::string name(model_name);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const bool phi3 = name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos;
  special_strip_.assign(specials_.size(), 0);
  for (size_t i = 0; phi3 && i < specials_.size(); ++i) {
    const std::string& t = text(specials_[i]);
    if (t != "<unk>" && t != "<s>" && t != "<|endoftext|>") special_strip_[i] = kRstrip;
  }
}

Tokenizer Tokenizer::spm(std::vector<std::string> tokens, std::vector<float> scores, std::vector<int32_t> types,
                         int32_t bos, int32_t eos, bool add_space_prefix) {
  Tokenizer t;
  t.kind_ = Kind::spm;
  t.tokens_ = std::move(tokens);
  t.scores_ = std::move(scores);
  t.types_ = std::move(types);
  t.bos_ = bos;
  t.eos_ = eos;
  t.unk_ = 0;
  t.add_space_prefix_ = add_space_prefix;
  t.index();
  return t;
}

Tokenizer Tokenizer::bpe(std::vector<std::string> tokens, const std::vector<std::string>& merges,
                         std::vector<int32_t> types, int32_t bos, int32_t eos, Pre pre) {
  Tokenizer t;
  t.kind_ = Kind::bpe;
  t.pre_ = pre;
  t.tokens_ = std::move(tokens);
  t.types_ = std::move(types);
  t.bos_ = bos;
  t.eos_ = eos;
  t.add_bos_ = bos >= 0;
  t.add_space_prefix_ = false;
  for (size_t i = 0; i < merges.size(); ++i) t.merge_rank_.emplace(merges[i], static_cast<int32_t>(i));
  t.index();
  return t;
}

Tokenizer Tokenizer::from_gguf(const gguf::File& f) {
  const std::string model(f.get_string("tokenizer.ggml.model"));
  Tokenizer t;
  if (model == "llama") {
    t.kind_ = Kind::spm;
  } else if (model == "gpt2") {
    t.kind_ = Kind::bpe;
  } else if (model == "no_vocab") {  // (llama.cpp's converter writes it for models without one)
    fail(Status::unsupported, f.path() + ": the model has no vocabulary (tokenizer.ggml.model = no_vocab), so qmm cannot "
                                         "turn text into its tokens; `qmm gguf` shows what the file holds");
  } else {
    fail(Status::unsupported, f.path() + ": tokenizer '" + model + "' is not supported (llama = SentencePiece, gpt2 = BPE)");
  }
  for (std::string_view s : f.get_string_array("tokenizer.ggml.tokens")) t.tokens_.emplace_back(s);
  if (f.has("tokenizer.ggml.scores")) t.scores_ = f.get_f32_array("tokenizer.ggml.scores");
  if (f.has("tokenizer.ggml.token_type")) t.types_ = f.get_i32_array("tokenizer.ggml.token_type");
  auto id = [&](const char* key, int64_t def) {
    const std::optional<uint64_t> v = f.find_u64(key);
    if (v && *v >= t.tokens_.size()) {
      fail(Status::io, f.path() + ": " + key + " = " + std::to_string(*v) + " is not a token id (the vocabulary has " +
                           std::to_string(t.tokens_.size()) + " tokens)");
    }
    return static_cast<int32_t>(v ? static_cast<int64_t>(*v) : def);
  };
  const bool spm = t.kind_ == Kind::spm;
  t.bos_ = id("tokenizer.ggml.bos_token_id", spm ? 1 : -1);
  t.eos_ = id("tokenizer.ggml.eos_token_id", spm ? 2 : -1);
  t.eot_ = id("tokenizer.ggml.eot_token_id", -1);
  t.eom_ = id("tokenizer.ggml.eom_token_id", -1);
  const char* const fim_keys[6][2] = {{"tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id"},
                                      {"tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id"},
                                      {"tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id"},
                                      {"tokenizer.ggml.fim_pad_token_id", nullptr},
                                      {"tokenizer.ggml.fim_rep_token_id", nullptr},
                                      {"tokenizer.ggml.fim_sep_token_id", nullptr}};
  for (size_t k = 0; k < 6; ++k) {  // (the deprecated key wins, as llama.cpp reads it last)
    t.fim_[k] = id(fim_keys[k][0], -1);
    if (fim_keys[k][1] && f.has(fim_keys[k][1])) t.fim_[k] = id(fim_keys[k][1], -1);
  }
  t.unk_ = id("tokenizer.ggml.unknown_token_id", spm ? 0 : -1);
  if (!spm) {
    const std::string pre(f.find_string("tokenizer.ggml.pre").value_or(""));
    const std::optional<Pre> known = find_pre_tokenizer(pre);
    if (!known) {  // llama.cpp refuses it too ("unknown pre-tokenizer type")
      fail(Status::unsupported, f.path() + ": unknown pre-tokenizer tokenizer.ggml.pre = '" + pre + "' (supported: " +
                                    supported_pre_tokenizers() + ")");
    }
    t.pre_ = *known;
    std::vector<std::string_view> merges = f.get_string_array("tokenizer.ggml.merges");
    t.merge_rank_.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) t.merge_rank_.emplace(std::string(merges[i]), static_cast<int32_t>(i));
  }
  // Without the key, llama.cpp adds BOS for SentencePiece and for the Llama-3 pre-tokenizers.
  t.add_bos_ = f.has("tokenizer.ggml.add_bos_token") ? f.get_bool("tokenizer.ggml.add_bos_token") : spm || t.pre_ == Pre::llama3;
  t.add_eos_ = f.has("tokenizer.ggml.add_eos_token") && f.get_bool("tokenizer.ggml.add_eos_token");
  t.add_space_prefix_ = f.has("tokenizer.ggml.add_space_prefix") ? f.get_bool("tokenizer.ggml.add_space_prefix") : spm;
  if (!t.scores_.empty() && t.scores_.size() != t.tokens_.size()) fail(Status::io, f.path() + ": tokenizer.ggml.scores has the wrong length");
  if (!t.types_.empty() && t.types_.size() != t.tokens_.size()) fail(Status::io, f.path() + ": tokenizer.ggml.token_type has the wrong length");
  t.index(f.find_string("general.name").value_or(""));
  return t;
}

// ---- Queries -----------------------------------------------------------------------------------

int32_t Tokenizer::find(std::string_view text) const {
  const auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

TokenType Tokenizer::type(int32_t token) const { return static_cast<TokenType>(types_.at(static_cast<size_t>(token))); }

bool Tokenizer::is_end_of_generation(int32_t token) const { return std::binary_search(eog_.begin(), eog_.end(), token); }

std::string Tokenizer::description() const {
  std::string d = kind_ == Kind::spm ? "SentencePiece (scores, byte fallback)" : "byte-level BPE";
  if (kind_ == Kind::bpe) d += std::string(", ") + (pre_ == Pre::llama3 ? "Llama-3" : pre_ == Pre::qwen2 ? "Qwen 2" : pre_ == Pre::gpt2 ? "GPT-2" : pre_ == Pre::gpt4o ? "GPT-4o" : "llama.cpp's default") + " pre-tokenizer, " +
                               std::to_string(merge_rank_.size()) + " merges";
  d += ", " + std::to_string(tokens_.size()) + " tokens, BOS " + std::to_string(bos_) + ", EOS " + std::to_string(eos_);
  return d;
}

std::string Tokenizer::piece(int32_t token) const {
  check_arg(token >= 0 && static_cast<size_t>(token) < tokens_.size(), "token id " + std::to_string(token) + " is out of range");
  const std::string& text = tokens_[static_cast<size_t>(token)];
  switch (type(token)) {
    case TokenType::control:
    case TokenType::unused:
    case TokenType::unknown: return "";
    case TokenType::user_defined: return text;
    case TokenType::byte:
      if (const int b = byte_token_value(text); kind_ == Kind::spm && b >= 0) return std::string(1, static_cast<char>(b));
      break;
    case TokenType::normal: break;
  }
  if (kind_ == Kind::spm) {
    return replace_all(text, kSpmSpace, " ");
  }
  // Byte-level BPE: every code point stands for one byte.
  std::vector<uint32_t> cps;
  std::vector<size_t> offsets;
  decode_utf8(text, cps, offsets);
  std::string out;
  const ByteUnicode& bu = byte_unicode();
  for (size_t i = 0; i < cps.size(); ++i) {
    if (cps[i] < 324 && bu.cp_to_byte[cps[i]] >= 0) {
      out += static_cast<char>(bu.cp_to_byte[cps[i]]);
    } else {
      out.append(text, offsets[i], offsets[i + 1] - offsets[i]);
    }
  }
  return out;
}

std::string Tokenizer::decode(const std::vector<int32_t>& tokens) const {
  std::string out;
  TextStream ts(*this, true);
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i == 0 && tokens[i] == bos_) continue;
    out += ts.push(tokens[i]);
  }
  return out + ts.flush();
}

// ---- Encoding ---------------------------------------------------------------------------------

std::vector<Tokenizer::Fragment> Tokenizer::split_specials(std::string_view text) const {
  std::vector<Fragment> frags;
  if (!text.empty()) frags.push_back({-1, 0, text.size()});
  // Each special token, longest first, is looked for in every text fragment left (llama.cpp's
  // tokenizer_st_partition), so an earlier, longer token wins over an overlapping shorter one.
  auto space = [&](size_t i) { return std::isspace(static_cast<unsigned char>(text[i])) != 0; };
  std::vector<Fragment> next;
  for (size_t s = 0; s < specials_.size(); ++s) {
    const int32_t id = specials_[s];
    const std::string& t = tokens_[static_cast<size_t>(id)];
    next.clear();
    for (const Fragment& f : frags) {
      size_t b = f.begin;
      for (size_t at; f.token < 0 && (at = text.substr(0, f.end).find(t, b)) != std::string_view::npos;) {
        size_t left_end = at;
        if (special_strip_[s] & kLstrip) {
          while (left_end > b && space(left_end - 1)) --left_end;
        }
        if (left_end > b) next.push_back({-1, b, left_end});
        next.push_back({id, at, at + t.size()});
        b = at + t.size();
        if (special_strip_[s] & kRstrip) {
          while (b < f.end && space(b)) ++b;
        }
      }
      if (f.token >= 0) {
        next.push_back(f);
      } else if (b < f.end) {
        next.push_back({-1, b, f.end});
      }
    }
    frags.swap(next);
  }
  return frags;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special) const {
  std::vector<int32_t> out;
  if (add_special && add_bos_ && bos_ >= 0) out.push_back(bos_);
  bool after_special = true;  // SPM: a space prefix goes before the first fragment and after specials
  for (const Fragment& f : split_specials(text)) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    const std::string_view frag = text.substr(f.begin, f.end - f.begin);
    if (kind_ == Kind::spm) {
      std::string s(add_space_prefix_ && after_special ? 1 : 0, ' ');
      s.append(frag);
      encode_spm(replace_all(s, " ", kSpmSpace), out);
    } else {
      encode_bpe(frag, out);
    }
    after_special = false;
  }
  if (add_special && add_eos_ && eos_ >= 0) out.push_back(eos_);
  return out;
}

void Tokenizer::encode_spm(std::string_view text, std::vector<int32_t>& out) const {
  // Symbols: one per UTF-8 character, linked so that merges are O(1).
  struct Sym {
    int prev, next;
    size_t pos, len;
  };
  std::vector<Sym> sym;
  for (size_t i = 0; i < text.size();) {
    const size_t len = std::min(utf8_len(static_cast<uint8_t>(text[i])), text.size() - i);
    sym.push_back({static_cast<int>(sym.size()) - 1, static_cast<int>(sym.size()) + 1, i, len});
    i += len;
  }
  if (sym.empty()) return;
  sym.back().next = -1;

  // Candidate merges of neighbours whose concatenation is a token; best score first, then leftmost.
  struct Bigram {
    int left, right;
    float score;
    size_t len;
  };
  auto worse = [](const Bigram& a, const Bigram& b) { return a.score < b.score || (a.score == b.score && a.left > b.left); };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> queue(worse);
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const std::string_view merged = text.substr(sym[left].pos, sym[left].len + sym[right].len);
    const int32_t id = find(merged);
    if (id >= 0) queue.push({left, right, scores_[static_cast<size_t>(id)], merged.size()});
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Sym& l = sym[b.left];
    Sym& r = sym[b.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.len) continue;  // stale: one side merged since
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  // Symbols -> ids; a symbol outside the vocabulary falls back to its bytes.
  for (int i = 0; i >= 0; i = sym[i].next) {
    const std::string_view s = text.substr(sym[i].pos, sym[i].len);
    if (const int32_t id = find(s); id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char ch : s) {
      const int32_t id = byte_tokens_[static_cast<uint8_t>(ch)];
      if (id >= 0) {
        out.push_back(id);
      } else if (unk_ >= 0) {
        out.push_back(unk_);
      }
    }
  }
}

void Tokenizer::encode_bpe(std::string_view text, std::vector<int32_t>& out) const {
  const ByteUnicode& bu = byte_unicode();
  std::string word;
  for (std::string_view w : pre_tokenize(text, pre_)) {
    word.clear();
    for (char ch : w) word += bu.byte_to_text[static_cast<uint8_t>(ch)];
    bpe_word(word, out);
  }
}

void Tokenizer::bpe_word(const std::string& word, std::vector<int32_t>& out) const {
  // Llama-3 ("ignore_merges"): a word that is a token is taken whole.
  if (pre_ == Pre::llama3) {
    if (const int32_t id = find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  // Symbols: one per UTF-8 character, linked so that merges are O(1).
  struct Sym {
    int prev, next;
    size_t pos, len;
  };
  std::vector<Sym> sym;
  for (size_t i = 0; i < word.size();) {
    const size_t len = std::min(utf8_len(static_cast<uint8_t>(word[i])), word.size() - i);
    sym.push_back({static_cast<int>(sym.size()) - 1, static_cast<int>(sym.size()) + 1, i, len});
    i += len;
  }
  if (sym.empty()) return;
  sym.back().next = -1;

  // Every occurrence of the best-ranked adjacent pair is merged, left to right, before the next
  // rank (Hugging Face's semantics): a queue of candidate merges, lowest rank then leftmost first,
  // O(n log n) in the word's length. A merge made during rank r's pass that forms a pair ranked
  // better than r waits for the pass to end (with a trained merge list that never happens).
  struct Pair {
    int32_t rank;
    int left, right;
    size_t len;
  };
  auto worse = [](const Pair& a, const Pair& b) { return a.rank > b.rank || (a.rank == b.rank && a.left > b.left); };
  std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> queue(worse);
  std::vector<Pair> deferred;
  int32_t pass = -1;  // the rank being merged
  std::string key;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    key.assign(word, sym[left].pos, sym[left].len).append(" ").append(word, sym[right].pos, sym[right].len);
    const auto it = merge_rank_.find(key);
    if (it == merge_rank_.end()) return;
    const Pair p{it->second, left, right, sym[left].len + sym[right].len};
    if (p.rank < pass) {
      deferred.push_back(p);
    } else {
      queue.push(p);
    }
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty() || !deferred.empty()) {
    if (!deferred.empty() && (queue.empty() || queue.top().rank != pass)) {  // rank `pass` is done
      for (const Pair& p : deferred) queue.push(p);
      deferred.clear();
    }
    const Pair p = queue.top();
    queue.pop();
    pass = p.rank;
    Sym& l = sym[p.left];
    Sym& r = sym[p.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != p.len) continue;  // stale: one side merged since
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = p.left;
    try_add(l.prev, p.left);
    try_add(p.left, l.next);
  }
  std::vector<std::string> parts;
  for (int i = 0; i >= 0; i = sym[i].next) {
    parts.push_back(word.substr(sym[i].pos, sym[i].len));
  }
  for (const std::string& p : parts) {
    if (const int32_t id = find(p); id >= 0) {
      out.push_back(id);
      continue;
    }
    for (size_t i = 0; i < p.size();) {  // not in the vocabulary: one token per byte character
      const size_t len = std::min(utf8_len(static_cast<uint8_t>(p[i])), p.size() - i);
      const int32_t id = find(std::string_view(p).substr(i, len));
      if (id >= 0) {
        out.push_back(id);
      } else if (unk_ >= 0) {
        out.push_back(unk_);
      }
      i += len;
    }
  }
}

// ---- Streaming ---------------------------------------------------------------------------------

std::string take_valid_utf8(std::string& s) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte (no overlongs, surrogates, > U+10FFFF)
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    }
    size_t ok = len ? 1 : 0;  // bytes of the sequence that are valid so far
    while (ok && ok < len && i + ok < s.size()) {
      const auto c = static_cast<uint8_t>(s[i + ok]);
      if (ok == 1 ? (c < lo || c > hi) : (c & 0xC0) != 0x80) break;
      ++ok;
    }
    if (len && ok == len) {
      out.append(s, i, len);
      i += len;
    } else if (len && i + ok == s.size()) {
      break;  // a valid beginning cut short: wait for more bytes
    } else {
      out += kReplacement;
      i += std::max<size_t>(ok, 1);
    }
  }
  s.erase(0, i);
  return out;
}

std::string TextStream::push(int32_t token) {
  std::string p = tok_.piece(token);
  if (strip_ && !p.empty()) {
    if (p[0] == ' ') p.erase(0, 1);
    strip_ = false;
  }
  pending_ += p;
  return take_valid_utf8(pending_);
}

std::string TextStream::flush() {
  std::string out = take_valid_utf8(pending_);
  if (!pending_.empty()) out += "\xEF\xBF\xBD";
  pending_.clear();
  return out;
}

}  // namespace qmm::llm
