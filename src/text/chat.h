// A model's chat format: its chat template (GGUF `tokenizer.chat_template`, or one named by
// --chat-template), the BOS/EOS texts the template is given, and the end-of-turn tokens a reply
// stops at. Shared by `qmm chat` and `qmm serve`.
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
  std::vector<int32_t> end_tokens;  // end-of-turn tokens (<|eot_id|>, <|im_end|>, <end_of_turn>, ...) besides EOS/EOT

  // `override_template`: a built-in name or a file (resolve_chat_template); empty: the model's
  // template. A model without one is an Error(invalid_argument) naming --chat-template.
  static ChatFormat from_model(const gguf::File& f, const Tokenizer& tok, const std::string& override_template);

  // The conversation rendered and tokenized; BOS is added when the tokenizer wants one and the
  // template did not write it.
  std::vector<int32_t> tokens(const Tokenizer& tok, const std::vector<ChatMessage>& messages,
                              bool add_generation_prompt) const;
};

}  // namespace qmm::llm
