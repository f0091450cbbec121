// Tool calling of /v1/chat/completions, as OpenAI's API and llama-server: the request's
// `tools` / `tool_choice` and the tool messages of a conversation, their rendering through the
// model's chat template (which receives `tools` and messages with `tool_calls`), a grammar
// that forces a call (tool_choice required or a named function), and the model's output
// parsed back into calls. The output formats understood, whichever the template:
//   Qwen 2.5 / 3 and Hermes:  <tool_call>{"name": F, "arguments": {...}}</tool_call> (one or more)
//   Llama 3.x:                {"name": F, "parameters": {...}} (after <|python_tag|>, if any)
//   Mistral:                  [TOOL_CALLS][{"name": F, "arguments": {...}}, ...]
//   Gemma and others:         {"name": F, "arguments": {...}}, also in a ```json fence
// Output that does not parse as calls of the request's tools is plain content.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol.h"
#include "text/jinja/value.h"

namespace qmm::serve {

// `tools`, `tool_choice` and `parallel_tool_calls` of a request body into `r` (ApiError 400).
void parse_tools(const nlohmann::ordered_json& body, Request& r);
// A message's tool_calls (assistant) or tool_call_id / name (tool) into `t` (ApiError 400).
void parse_tool_turn(const nlohmann::ordered_json& msg, const std::string& at, Turn& t);
// Tool calls as OpenAI's message.tool_calls (with "index" in a stream's delta).
nlohmann::ordered_json tool_calls_json(const std::vector<ToolCall>& calls, bool stream);

// Whether the conversation needs the tool-aware rendering (tools, tool messages or calls).
bool uses_tools(const Request& r);
// The messages and the tools as the chat template sees them (arguments as objects).
llm::jinja::Value template_messages(const Request& r);
llm::jinja::Value template_tools(const Request& r);

enum class ToolFormat { hermes, llama3, mistral, generic };
// The format a chat template asks its model for (by the markers it writes).
ToolFormat tool_format(const std::string& template_source);
// The GBNF that forces one call of the request's tools (tool_choice required) or of the
// named one, in `f`'s format; "" when the request forces nothing.
std::string forced_tool_gbnf(const Request& r, ToolFormat f);

// Whether the request's output is parsed for tool calls.
bool parses_tool_calls(const Request& r);
// The calls in `text` (each a function of the request's tools, arguments an object); `content`
// gets the text outside them. None (and content = text) when the text is not calls.
std::vector<ToolCall> parse_tool_calls(const std::string& text, const Request& r, std::string& content);

// Streaming: text that cannot be the start of a call is passed on as it comes; from where a
// call may begin it is held back, and parsed when the output ends.
class ToolCallStream {
 public:
  explicit ToolCallStream(const Request& r) : r_(r) {}
  std::string push(const std::string& text);  // the content to send now
  // At the end: the calls, and in `content` the held text that is content after all.
  std::vector<ToolCall> finish(std::string& content);

 private:
  const Request& r_;
  std::string held_;
  bool content_ = false;  // text seen that is not the start of a call
};

}  // namespace qmm::serve
