#include "text/chat_template.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "text/jinja/builtins.h"
#include "text/jinja/template.h"

namespace qmm::llm {
namespace {

std::string render(const std::string& source, const jinja::Value& messages, const jinja::Value& tools,
                   bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token,
                   const std::time_t* now) {
  using jinja::Value;
  Value globals = Value::make_dict({{"messages", messages},
                               {"add_generation_prompt", Value(add_generation_prompt)},
                               {"bos_token", Value(bos_token)},
                               {"eos_token", Value(eos_token)},
                               {"tools", tools}});
  if (now) {
    long long t = *now;
    globals.mutable_dict().set("strftime_now", Value::function([t](jinja::CallArgs& a) {
      if (a.pos.size() != 1 || !a.pos[0].is_string()) throw jinja::Failure("strftime_now() takes a format string");
      return Value(jinja::strftime_at(t, a.pos[0].str()));
    }));
  }
  return jinja::Template(source).render(globals);
}

jinja::Value message_list(const std::vector<ChatMessage>& messages) {
  using jinja::Value;
  std::vector<Value> list;
  list.reserve(messages.size());
  for (const auto& m : messages) list.push_back(Value::make_dict({{"role", Value(m.role)}, {"content", Value(m.content)}}));
  return Value::list(std::move(list));
}

}  // namespace

std::string render_chat(const std::string& jinja_source, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token) {
  return render(jinja_source, message_list(messages), jinja::Value::none(), add_generation_prompt, bos_token, eos_token,
                nullptr);
}

std::string render_chat(const std::string& jinja_source, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token,
                        std::time_t now) {
  return render(jinja_source, message_list(messages), jinja::Value::none(), add_generation_prompt, bos_token, eos_token,
                &now);
}

std::string render_chat(const std::string& jinja_source, const jinja::Value& messages, const jinja::Value& tools,
                        bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token) {
  return render(jinja_source, messages, tools, add_generation_prompt, bos_token, eos_token, nullptr);
}

std::string resolve_chat_template(const std::string& name_or_file) {
  if (auto t = builtin_chat_template(name_or_file)) return *t;
  std::string names;
  for (const auto& n : builtin_chat_template_names()) names += (names.empty() ? "" : ", ") + n;
  std::error_code ec;
  std::ifstream f;
  if (std::filesystem::is_regular_file(name_or_file, ec)) f.open(name_or_file, std::ios::binary);
  if (!f.is_open())
    fail(Status::invalid_argument, "--chat-template: '" + name_or_file +
                                       "' is neither a built-in template (" + names + ") nor a readable file");
  std::string source(kMaxChatTemplateBytes + 1, '\0');  // one byte more than allowed: too large
  f.read(source.data(), static_cast<std::streamsize>(source.size()));
  source.resize(static_cast<size_t>(f.gcount()));
  if (f.bad()) fail(Status::io, "--chat-template: cannot read '" + name_or_file + "'");
  if (source.size() > kMaxChatTemplateBytes)
    fail(Status::invalid_argument, "--chat-template: '" + name_or_file + "' is larger than 1 MiB; not a template?");
  try {
    jinja::Template check(source);
  } catch (const Error& e) {
    fail(Status::invalid_argument, "--chat-template " + name_or_file + ": " + e.what());
  }
  return source;
}

}  // namespace qmm::llm
