#include "text/chat.h"

#include "core/error.h"
#include "gguf/gguf.h"

namespace qmm::llm {

ChatFormat ChatFormat::from_template(const Tokenizer& tok, std::string source, std::string name) {
  ChatFormat c;
  c.template_source = std::move(source);
  c.template_name = std::move(name);
  if (tok.bos() >= 0) c.bos = tok.text(tok.bos());
  if (tok.eos() >= 0) c.eos = tok.text(tok.eos());
  return c;
}

ChatFormat ChatFormat::from_model(const gguf::File& f, const Tokenizer& tok, const std::string& override_template) {
  if (!override_template.empty()) return from_template(tok, resolve_chat_template(override_template), override_template);
  if (const auto t = f.find_string("tokenizer.chat_template")) {
    if (t->size() > kMaxChatTemplateBytes)
      fail(Status::invalid_argument, "the model's chat template (tokenizer.chat_template) is larger than 1 MiB; give "
                                     "one with --chat-template NAME|FILE");
    return from_template(tok, std::string(*t), "the model's chat template");
  }
  std::string names;
  for (const std::string& n : builtin_chat_template_names()) names += (names.empty() ? "" : ", ") + n;
  fail(Status::invalid_argument, "the model has no chat template (tokenizer.chat_template); give one with "
                                 "--chat-template NAME|FILE (built-in: " + names + ")");
}

namespace {

std::vector<int32_t> encode_rendered(const Tokenizer& tok, const std::string& text) {
  std::vector<int32_t> out = tok.encode(text, false);
  if (tok.add_bos() && tok.bos() >= 0 && (out.empty() || out.front() != tok.bos())) out.insert(out.begin(), tok.bos());
  return out;
}

}  // namespace

std::vector<int32_t> ChatFormat::tokens(const Tokenizer& tok, const std::vector<ChatMessage>& messages,
                                        bool add_generation_prompt) const {
  return encode_rendered(tok, render_chat(template_source, messages, add_generation_prompt, bos, eos));
}

std::vector<int32_t> ChatFormat::tokens(const Tokenizer& tok, const jinja::Value& messages, const jinja::Value& tools,
                                        bool add_generation_prompt) const {
  return encode_rendered(tok, render_chat(template_source, messages, tools, add_generation_prompt, bos, eos));
}

}  // namespace qmm::llm
