#include "text/chat.h"

#include "core/error.h"
#include "gguf/gguf.h"

namespace qmm::llm {

ChatFormat ChatFormat::from_model(const gguf::File& f, const Tokenizer& tok, const std::string& override_template) {
  ChatFormat c;
  if (!override_template.empty()) {
    c.template_source = resolve_chat_template(override_template);
    c.template_name = override_template;
  } else if (const auto t = f.find_string("tokenizer.chat_template")) {
    if (t->size() > kMaxChatTemplateBytes)
      fail(Status::invalid_argument, "the model's chat template (tokenizer.chat_template) is larger than 1 MiB; give "
                                     "one with --chat-template NAME|FILE");
    c.template_source = std::string(*t);
    c.template_name = "the model's chat template";
  } else {
    std::string names;
    for (const std::string& n : builtin_chat_template_names()) names += (names.empty() ? "" : ", ") + n;
    fail(Status::invalid_argument, "the model has no chat template (tokenizer.chat_template); give one with "
                                   "--chat-template NAME|FILE (built-in: " + names + ")");
  }
  if (tok.bos() >= 0) c.bos = tok.text(tok.bos());
  if (tok.eos() >= 0) c.eos = tok.text(tok.eos());
  for (const char* t : {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>", "<|endoftext|>"}) {
    const int32_t id = tok.find(t);
    if (id >= 0 && !tok.is_end_of_generation(id)) c.end_tokens.push_back(id);
  }
  return c;
}

std::vector<int32_t> ChatFormat::tokens(const Tokenizer& tok, const std::vector<ChatMessage>& messages,
                                        bool add_generation_prompt) const {
  const std::string text = render_chat(template_source, messages, add_generation_prompt, bos, eos);
  std::vector<int32_t> out = tok.encode(text, false);
  if (tok.add_bos() && tok.bos() >= 0 && (out.empty() || out.front() != tok.bos())) out.insert(out.begin(), tok.bos());
  return out;
}

}  // namespace qmm::llm
