// Chat templates: a conversation -> the prompt text a chat model was trained on, by rendering
// the model's Jinja template (GGUF `tokenizer.chat_template`) or a built-in one, byte for byte
// as Hugging Face transformers' apply_chat_template renders it (see jinja/template.h).
#pragma once
#include <cstddef>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qmm::llm {

struct ChatMessage {
  std::string role, content;
};

// Renders a Jinja chat template with the variables transformers gives it: messages (a list of
// {role, content}), add_generation_prompt, bos_token, eos_token, tools = none (as transformers
// passes it when there are no tools), and the globals raise_exception and strftime_now (local
// time). A syntax or evaluation error, raise_exception included, is a qmm::Error
// "template line N: …".
std::string render_chat(const std::string& jinja_source, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token);
// The same with strftime_now reading the local time at `now` instead of the clock (tests).
std::string render_chat(const std::string& jinja_source, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token,
                        std::time_t now);

namespace jinja {
class Value;
}
// The same with the messages as Jinja values (dicts that may hold tool_calls, tool_call_id,
// name, ... as OpenAI's messages do) and `tools` (a list of OpenAI's tool definitions, or None).
std::string render_chat(const std::string& jinja_source, const jinja::Value& messages, const jinja::Value& tools,
                        bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token);

// Built-in templates by name ("llama3", "llama2", "mistral", "chatml", "gemma", "phi3"); empty
// optional if unknown. Each renders a system/user/assistant conversation exactly as the model
// family's published template does (tests compare them with python3-jinja2).
std::optional<std::string> builtin_chat_template(std::string_view name);

// The largest chat template qmm accepts, from a file or from a GGUF (the largest published one,
// with tool-calling instructions, is under 20 KB).
constexpr size_t kMaxChatTemplateBytes = size_t{1} << 20;

// --chat-template NAME|FILE: a built-in name, else the contents of FILE (checked to parse);
// a qmm::Error naming the option and the built-in names otherwise.
std::string resolve_chat_template(const std::string& name_or_file);

// Names of the built-ins, for help texts and error messages.
std::vector<std::string> builtin_chat_template_names();

}  // namespace qmm::llm
