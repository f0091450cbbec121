// Tokenizers from GGUF metadata (tokenizer.ggml.*), token for token as llama.cpp's:
//  - SentencePiece-style (`model = llama`: Llama 2, Gemma, Phi-3): spaces become "▁" (with a
//    space prefix unless tokenizer.ggml.add_space_prefix is false, as for Gemma), UTF-8
//    characters are merged pairwise, best vocabulary score first (ties: leftmost), like
//    llama.cpp's SPM tokenizer; characters outside the vocabulary fall back to <0xXX> tokens.
//  - Byte-level BPE (`model = gpt2`): bytes are mapped to printable code points (GPT-2's
//    byte↔unicode table), the text is split by the pre-tokenizer (GPT-2's, Llama-3's, Qwen 2's
//    or GPT-4o's regex, by tokenizer.ggml.pre, matched by hand over exact Unicode categories from
//    libutf8proc), and each piece is merged by merge rank.
// Control, user-defined and unknown tokens written in the text (e.g. "<|im_end|>") are
// recognised as themselves before the rest is tokenized, like llama.cpp's parse_special (the
// longest token first over the whole text; Phi-3's special tokens eat the spaces after them).
// BOS / EOS are added as tokenizer.ggml.add_bos_token / add_eos_token say. The tokens that end
// a generation are EOS, EOT, EOM and, by llama.cpp's rule, every token spelled like an end of
// turn (<|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, </s>, ...) or a FIM pad / repo /
// separator, which are control tokens whatever type the file gives them. TextStream turns generated tokens into valid UTF-8 pieces.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace qmm::gguf {
class File;
}

namespace qmm::llm {

// tokenizer.ggml.token_type values
enum class TokenType : int32_t { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

class Tokenizer {
 public:
  enum class Kind { spm, bpe };
  // BPE pre-tokenizer (tokenizer.ggml.pre): GPT-2's regex, Llama 3's, Qwen 2's, GPT-4o's (o200k;
  // llama.cpp's gpt-4o, llama4, ...), or llama.cpp's "default" (a missing key): punctuation runs, then GPT-2's
  // regex, then digit runs, then groups of three ASCII digits, each splitting the pieces of the one before.
  enum class Pre { gpt2, llama3, qwen2, gpt4o, standard };

  static Tokenizer from_gguf(const gguf::File& f);
  Tokenizer(Tokenizer&&) = default;
  Tokenizer& operator=(Tokenizer&&) = default;
  Tokenizer(const Tokenizer&) = delete;  // the id index points into tokens_
  Tokenizer& operator=(const Tokenizer&) = delete;
  // Direct construction (tests). `types` may be empty (all normal, "<0xXX>" byte tokens).
  static Tokenizer spm(std::vector<std::string> tokens, std::vector<float> scores, std::vector<int32_t> types,
                       int32_t bos, int32_t eos, bool add_space_prefix = true);
  static Tokenizer bpe(std::vector<std::string> tokens, const std::vector<std::string>& merges,
                       std::vector<int32_t> types, int32_t bos, int32_t eos, Pre pre = Pre::llama3);

  // Text -> token ids. With add_special, BOS first / EOS last where the model asks for them
  // (add_bos(), tokenizer.ggml.add_eos_token); control tokens written in the text are always recognised.
  std::vector<int32_t> encode(std::string_view text, bool add_special) const;
  // The bytes a token stands for ("" for control tokens); may be part of a UTF-8 sequence.
  std::string piece(int32_t token) const;
  // Concatenated pieces of `tokens` (BOS and the space prefix of the first word removed).
  std::string decode(const std::vector<int32_t>& tokens) const;

  Kind kind() const { return kind_; }
  size_t n_vocab() const { return tokens_.size(); }
  int32_t bos() const { return bos_; }
  int32_t eos() const { return eos_; }
  int32_t eot() const { return eot_; }  // the end-of-turn token chat stops at (-1: none; then EOS)
  bool add_bos() const { return add_bos_; }
  bool add_space_prefix() const { return kind_ == Kind::spm && add_space_prefix_; }
  bool is_end_of_generation(int32_t token) const;  // EOS, EOT, end-of-turn tokens
  const std::string& text(int32_t token) const { return tokens_.at(static_cast<size_t>(token)); }
  int32_t find(std::string_view text) const;        // -1 if absent
  TokenType type(int32_t token) const;              // as the file gives it, control by llama.cpp's rules
  std::string description() const;                 // "SentencePiece (llama), 512 tokens, ..." for traces

 private:
  Tokenizer() = default;
  void index(std::string_view model_name = {});
  void find_end_of_generation();
  // llama.cpp's parse_special: text fragments (token -1) and recognised special tokens.
  struct Fragment {
    int32_t token;
    size_t begin, end;
  };
  std::vector<Fragment> split_specials(std::string_view text) const;
  void encode_spm(std::string_view text, std::vector<int32_t>& out) const;
  void encode_bpe(std::string_view text, std::vector<int32_t>& out) const;
  void bpe_word(const std::string& word, std::vector<int32_t>& out) const;

  Kind kind_ = Kind::spm;
  Pre pre_ = Pre::llama3;
  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<int32_t> types_;
  std::unordered_map<std::string_view, int32_t> ids_;
  std::unordered_map<std::string, int32_t> merge_rank_;  // "left right" -> rank
  std::vector<int32_t> specials_;                        // control / user-defined / unknown ids, longest first
  std::vector<uint8_t> special_strip_;                   // per special: kLstrip | kRstrip (spaces around it are eaten)
  std::vector<int32_t> eog_;                             // end-of-generation ids, ascending
  int32_t bos_ = -1, eos_ = -1, eot_ = -1, eom_ = -1, unk_ = -1;
  int32_t fim_[6] = {-1, -1, -1, -1, -1, -1};             // fill-in-the-middle: prefix, suffix, middle, pad, repo, separator
  int32_t byte_tokens_[256];                              // SPM <0xXX> ids (-1 if absent)
  bool add_bos_ = true, add_eos_ = false, add_space_prefix_ = true;
};

// Streams generated tokens as text: pieces are concatenated and only complete UTF-8
// sequences are returned (an incomplete one waits for the next token; invalid bytes become
// U+FFFD). With `strip_leading_space`, the space prefix of the first word is removed.
class TextStream {
 public:
  explicit TextStream(const Tokenizer& tok, bool strip_leading_space = false)
      : tok_(tok), strip_(strip_leading_space && tok.add_space_prefix()) {}
  std::string push(int32_t token);
  std::string flush();  // whatever is left (an incomplete sequence becomes U+FFFD)

 private:
  const Tokenizer& tok_;
  bool strip_;
  std::string pending_;
};

// Unicode general category classes of the pre-tokenizer regexes (exact, from libutf8proc).
bool is_unicode_letter(uint32_t cp);       // \p{L}
bool is_unicode_number(uint32_t cp);       // \p{N}
bool is_unicode_punctuation(uint32_t cp);  // \p{P}

// The pre-tokenizer of tokenizer.ggml.pre `name` ("" when the key is missing: llama.cpp's
// default), or nullopt for one llama.cpp does not know either.
std::optional<Tokenizer::Pre> find_pre_tokenizer(std::string_view name);
// "default, llama3, ..." for error messages.
std::string supported_pre_tokenizers();

// The pre-tokenizer's split of `text` into words (views into `text`), by the regex of `pre`.
std::vector<std::string_view> pre_tokenize(std::string_view text, Tokenizer::Pre pre);

// Splits `s` into the longest prefix of complete, valid UTF-8 (invalid bytes replaced by
// U+FFFD) and an incomplete tail left in `s`.
std::string take_valid_utf8(std::string& s);

}  // namespace qmm::llm
