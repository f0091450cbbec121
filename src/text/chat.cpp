#include "text/chat.h"

#include <cstddef>
#include <utility>

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

bool drop_oldest_turn(std::vector<ChatMessage>& messages) {
  size_t first = 0;
  while (first < messages.size() && messages[first].role == "system") ++first;
  if (first + 1 >= messages.size()) return false;
  size_t end = first + 1;
  while (end + 1 < messages.size() && messages[end].role != "user") ++end;
  messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(first), messages.begin() + static_cast<std::ptrdiff_t>(end));
  return true;
}

FittedPrompt fit_conversation(const ChatFormat& fmt, const Tokenizer& tok, std::vector<ChatMessage>& messages, size_t n_ctx,
                              size_t reserve) {
  FittedPrompt out;
  out.tokens = fmt.tokens(tok, messages, true);
  if (out.tokens.size() >= n_ctx) {
    // Could it fit with every older turn dropped? If not, refuse it before dropping any.
    std::vector<ChatMessage> alone;
    for (size_t i = 0; i + 1 < messages.size() && messages[i].role == "system"; ++i) alone.push_back(messages[i]);
    alone.push_back(messages.back());
    if (std::vector<int32_t> t = fmt.tokens(tok, alone, true); t.size() >= n_ctx) {
      out.tokens = std::move(t);
      out.fits = false;
      return out;
    }
  }
  while (out.tokens.size() + reserve > n_ctx && drop_oldest_turn(messages)) {
    ++out.dropped;
    out.tokens = fmt.tokens(tok, messages, true);
  }
  return out;
}

}  // namespace qmm::llm
