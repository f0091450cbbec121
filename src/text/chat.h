// A model's chat format: its chat template (GGUF `tokenizer.chat_template`, or one named by
// --chat-template), the BOS/EOS texts the template is given, and the rule that adds BOS. Shared
// by `qmm chat` and `qmm serve`. A reply stops at the tokenizer's end-of-generation tokens
// (EOS, EOT and every end-of-turn token of the vocabulary: Tokenizer::is_end_of_generation).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace qmm::gguf {
class File;
}

namespace qmm::llm {

struct ChatFormat {
  std::string template_source;     // Jinja
  std::string template_name;       // "the model's" or the --chat-template value, for messages
  std::string bos, eos;            // token texts passed to the template ("" if the model has none)

  // `source` with the tokenizer's BOS / EOS texts.
  static ChatFormat from_template(const Tokenizer& tok, std::string source, std::string name);

  // `override_template`: a built-in name or a file (resolve_chat_template); empty: the model's
  // template. A model without one is an Error(invalid_argument) naming --chat-template.
  static ChatFormat from_model(const gguf::File& f, const Tokenizer& tok, const std::string& override_template);

  // The conversation rendered and tokenized; BOS is added when the tokenizer wants one and the
  // template did not write it.
  std::vector<int32_t> tokens(const Tokenizer& tok, const std::vector<ChatMessage>& messages,
                              bool add_generation_prompt) const;
  // The same with messages and tools as Jinja values (render_chat's overload for tool calling).
  std::vector<int32_t> tokens(const Tokenizer& tok, const jinja::Value& messages, const jinja::Value& tools,
                              bool add_generation_prompt) const;
};

// A conversation's prompt for its next reply in n_ctx positions, `reserve` of them kept for the
// reply (`qmm chat`): while it does not fit, the oldest turn (a user message and what follows it
// up to the next one) is dropped, never the system messages. Where even the last message alone
// after the system messages takes n_ctx tokens or more, nothing is dropped and `fits` is false
// (`tokens` then holds that alone-prompt).
struct FittedPrompt {
  std::vector<int32_t> tokens;
  size_t dropped = 0;  // turns dropped from `messages`
  bool fits = true;
};
FittedPrompt fit_conversation(const ChatFormat& fmt, const Tokenizer& tok, std::vector<ChatMessage>& messages, size_t n_ctx,
                              size_t reserve);

// Drops the oldest turn after the leading system messages; false when there is none to drop
// (the last message is never dropped).
bool drop_oldest_turn(std::vector<ChatMessage>& messages);

}  // namespace qmm::llm
