// Special tokens by their text, as llama.cpp's vocabulary loader finds them (llama-vocab.cpp,
// "auto-detect special tokens by text"): end-of-turn, end-of-message, fill-in-the-middle and
// end-of-generation tokens are control tokens whatever type the file gives them.
#include <algorithm>
#include <iterator>

#include "text/tokenizer.h"

namespace qmm::llm {
namespace {

// llama.cpp's special tokens found by their text (llama-vocab.cpp, "auto-detect special tokens
// by text"), whatever type the file gives them. The end-of-turn token when the file names none:
constexpr std::string_view kEndOfTurn[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                                           "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]",
                                           "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81sentence\xEF\xBD\x9C>",  // DeepSeek
                                           "<end_of_utterance>"};
// Fill-in-the-middle tokens (prefix, suffix, middle, pad, repo, separator) when the file names
// none: each kind's first one found is a control token; pad, repo and separator end generation.
constexpr std::string_view kFim[6][8] = {
    {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>", "<PRE>",
     "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"},
    {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>", "<SUF>",
     "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"},
    {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>", "<MID>",
     "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"},
    {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"},
    {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
    {"<|file_sep|>"},
};
// Every token spelled like one of these ends generation and is a control token.
constexpr std::string_view kEndOfGeneration[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>",
    "<eos>", "<turn|>", "<|tool_response>", "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~["};
// gpt-oss's tokens that are always rendered (user-defined whatever their type).
constexpr std::string_view kAlwaysRendered[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

}  // namespace

void Tokenizer::find_end_of_generation() {
  auto set_type = [&](int32_t id, TokenType t) { types_[static_cast<size_t>(id)] = static_cast<int32_t>(t); };
  auto make_control = [&](int32_t id) {
    if (type(id) != TokenType::control) set_type(id, TokenType::control);
  };
  if (eot_ < 0) {
    for (std::string_view t : kEndOfTurn) {
      if (const int32_t id = find(t); id >= 0) {
        eot_ = id;
        make_control(id);
        break;
      }
    }
  }
  if (eom_ < 0 && (eom_ = find("<|eom_id|>")) >= 0) make_control(eom_);
  eog_.clear();
  for (size_t kind = 0; kind < std::size(kFim); ++kind) {
    for (size_t i = 0; fim_[kind] < 0 && i < std::size(kFim[kind]) && !kFim[kind][i].empty(); ++i) {
      if ((fim_[kind] = find(kFim[kind][i])) >= 0) make_control(fim_[kind]);
    }
    if (kind >= 3 && fim_[kind] >= 0) eog_.push_back(fim_[kind]);  // pad, repo, separator
  }
  for (std::string_view t : kEndOfGeneration) {
    if (const int32_t id = find(t); id >= 0) {
      eog_.push_back(id);
      make_control(id);
    }
  }
  for (std::string_view t : kAlwaysRendered) {
    if (const int32_t id = find(t); id >= 0) set_type(id, TokenType::user_defined);
  }
  for (int32_t id : {eos_, eot_, eom_}) {
    if (id >= 0) eog_.push_back(id);
  }
  std::sort(eog_.begin(), eog_.end());
  eog_.erase(std::unique(eog_.begin(), eog_.end()), eog_.end());
  // llama.cpp's exceptions: gpt-oss / Solar Open end turns with <|return|> / <|call|> (or
  // <|calls|> / <|flush|>), and <|end|> is then text; Gemma 4 / PaddleOCR's </s> is text.
  auto eog = [&](std::string_view t) {
    const int32_t id = find(t);
    return id >= 0 && is_end_of_generation(id) ? id : -1;
  };
  auto drop = [&](int32_t id, TokenType t) {
    eog_.erase(std::find(eog_.begin(), eog_.end(), id));
    set_type(id, t);
  };
  const bool calls = eog("<|call|>") >= 0 || eog("<|calls|>") >= 0;
  if (const int32_t end = eog("<|end|>"); end >= 0 && calls && (eog("<|return|>") >= 0 || eog("<|flush|>") >= 0)) {
    drop(end, TokenType::user_defined);
  }
  if (const int32_t s = eog("</s>"); s >= 0 && eog("<|tool_response>") >= 0) drop(s, TokenType::normal);
}

}  // namespace qmm::llm
