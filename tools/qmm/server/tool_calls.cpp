#include "tool_calls.h"

#include <algorithm>
#include <atomic>
#include <random>

#include "json_schema.h"

namespace qmm::serve {
namespace {

using ojson = nlohmann::ordered_json;
using llm::jinja::Value;

constexpr size_t kMaxTools = 128;
constexpr int kMaxJsonDepth = 64;  // tool definitions and arguments handed to the template

[[noreturn]] void bad(const std::string& param, const std::string& message) { throw ApiError(400, message, param); }

const ojson* field(const ojson& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

bool valid_name(const std::string& n) {  // OpenAI's: [a-zA-Z0-9_-]{1,64}
  return !n.empty() && n.size() <= 64 &&
         std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
}

Value to_value(const ojson& j, int depth) {
  if (depth > kMaxJsonDepth) throw ApiError(400, "tool definitions or arguments nest deeper than " + std::to_string(kMaxJsonDepth), "tools");
  switch (j.type()) {
    case ojson::value_t::null: return Value::none();
    case ojson::value_t::boolean: return Value(j.get<bool>());
    case ojson::value_t::number_integer: return Value(j.get<int64_t>());
    case ojson::value_t::number_unsigned:
      return j.get<uint64_t>() <= INT64_MAX ? Value(static_cast<int64_t>(j.get<uint64_t>())) : Value(j.get<double>());
    case ojson::value_t::number_float: return Value(j.get<double>());
    case ojson::value_t::string: return Value(j.get<std::string>());
    case ojson::value_t::array: {
      std::vector<Value> items;
      for (const ojson& x : j) items.push_back(to_value(x, depth + 1));
      return Value::list(std::move(items));
    }
    case ojson::value_t::object: {
      std::vector<std::pair<std::string, Value>> items;
      for (const auto& [k, v] : j.items()) items.emplace_back(k, to_value(v, depth + 1));
      return Value::make_dict(std::move(items));
    }
    default: return Value::none();
  }
}

std::vector<std::string> tool_names(const Request& r) {
  std::vector<std::string> names;
  if (r.tools.empty()) return names;
  for (const ojson& t : ojson::parse(r.tools)) names.push_back(t["function"]["name"].get<std::string>());
  return names;
}

// Nine letters and digits: what Mistral's template demands of the ids it is given back.
std::string call_id() {
  static std::atomic<uint64_t> n{std::random_device{}()};
  static const char* digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  uint64_t x = (n.fetch_add(0x9E3779B97F4A7C15ull) + 1) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  std::string id;
  for (int i = 0; i < 9; ++i, x /= 62) id += digits[x % 62];
  return id;
}

// One call: {"name": F, "arguments" | "parameters": {...} or a JSON string of one}.
bool one_call(const ojson& j, const std::vector<std::string>& names, std::vector<ToolCall>& out) {
  if (!j.is_object()) return false;
  const ojson* name = field(j, "name");
  if (!name || !name->is_string() || std::find(names.begin(), names.end(), name->get<std::string>()) == names.end()) {
    return false;
  }
  const ojson* args = field(j, "arguments");
  if (!args) args = field(j, "parameters");
  ojson a = args ? *args : ojson::object();
  if (a.is_string()) a = ojson::parse(a.get<std::string>(), nullptr, false);
  if (!a.is_object()) return false;
  out.push_back({call_id(), name->get<std::string>(), a.dump()});
  return true;
}

// A call or an array of calls as the whole of `text` (after a Llama 3 / Mistral marker or in
// a code fence).
bool json_calls(std::string text, const std::vector<std::string>& names, std::vector<ToolCall>& out) {
  auto trim = [](std::string& s) {
    s.erase(0, s.find_first_not_of(" \t\r\n"));
    s.erase(s.find_last_not_of(" \t\r\n") + 1);
  };
  trim(text);
  for (const char* marker : {"<|python_tag|>", "[TOOL_CALLS]"}) {
    if (text.rfind(marker, 0) == 0) text.erase(0, std::string(marker).size());
  }
  if (text.rfind("```", 0) == 0 && text.size() >= 6 && text.compare(text.size() - 3, 3, "```") == 0) {
    const size_t nl = text.find('\n');
    text = nl == std::string::npos ? std::string() : text.substr(nl + 1, text.size() - 3 - (nl + 1));
  }
  trim(text);
  if (text.empty() || (text[0] != '{' && text[0] != '[')) return false;
  const ojson j = ojson::parse(text, nullptr, false);
  if (j.is_object()) return one_call(j, names, out);
  if (!j.is_array() || j.empty()) return false;
  for (const ojson& c : j) {
    if (!one_call(c, names, out)) return false;
  }
  return true;
}

}  // namespace

void parse_tools(const ojson& body, Request& r) {
  const ojson* tools = field(body, "tools");
  if (tools && !tools->is_array()) bad("tools", "'tools' must be an array");
  if (tools && !tools->empty()) {
    if (r.endpoint != Endpoint::chat) bad("tools", "'tools' is for /v1/chat/completions");
    if (tools->size() > kMaxTools) bad("tools", "'tools' holds more than " + std::to_string(kMaxTools) + " tools");
    std::vector<std::string> names;
    for (size_t i = 0; i < tools->size(); ++i) {
      const ojson& t = (*tools)[i];
      const std::string at = "tools[" + std::to_string(i) + "]";
      const ojson* type = t.is_object() ? field(t, "type") : nullptr;
      if (!type || *type != "function") bad(at, "'" + at + ".type' must be 'function'");
      const ojson* fn = field(t, "function");
      const ojson* name = fn && fn->is_object() ? field(*fn, "name") : nullptr;
      if (!name || !name->is_string() || !valid_name(name->get<std::string>())) {
        bad(at, "'" + at + ".function.name' must be 1 to 64 letters, digits, _ or -");
      }
      if (std::find(names.begin(), names.end(), name->get<std::string>()) != names.end()) {
        bad(at, "'" + at + "': the function name " + name->dump() + " is given twice");
      }
      names.push_back(name->get<std::string>());
      if (const ojson* p = field(*fn, "parameters"); p && !p->is_object()) bad(at, "'" + at + ".function.parameters' must be a JSON schema object");
      if (const ojson* d = field(*fn, "description"); d && !d->is_string()) bad(at, "'" + at + ".function.description' must be a string");
      to_value(t, 0);  // nesting bounded
    }
    r.tools = tools->dump();
  }
  if (const ojson* p = field(body, "parallel_tool_calls"); p && !p->is_boolean()) {
    bad("parallel_tool_calls", "'parallel_tool_calls' must be a boolean");
  }
  const ojson* choice = field(body, "tool_choice");
  if (!choice) return;
  if (choice->is_string()) {
    const std::string c = choice->get<std::string>();
    if (c == "none") r.tool_choice = ToolChoice::none;
    else if (c == "auto") r.tool_choice = ToolChoice::automatic;
    else if (c == "required") r.tool_choice = ToolChoice::required;
    else bad("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or {\"type\": \"function\", \"function\": {\"name\": ...}}");
  } else {
    const ojson* fn = choice->is_object() ? field(*choice, "function") : nullptr;
    const ojson* name = fn && fn->is_object() ? field(*fn, "name") : nullptr;
    if (!name || !name->is_string()) bad("tool_choice", "'tool_choice' must name a function: {\"type\": \"function\", \"function\": {\"name\": ...}}");
    r.tool_choice = ToolChoice::named;
    r.tool_name = name->get<std::string>();
    const std::vector<std::string> names = tool_names(r);
    if (std::find(names.begin(), names.end(), r.tool_name) == names.end()) {
      bad("tool_choice", "'tool_choice' names " + name->dump() + ", which is not in 'tools'");
    }
  }
  const bool forced = r.tool_choice == ToolChoice::required || r.tool_choice == ToolChoice::named;
  if (forced && r.tools.empty()) bad("tool_choice", "'tool_choice' 'required' needs 'tools'");
  if (forced && !r.grammar.empty()) {
    bad("tool_choice", "'tool_choice' forces a call through a grammar: it cannot be combined with '" + r.grammar_param + "'");
  }
}

void parse_tool_turn(const ojson& msg, const std::string& at, Turn& t) {
  if (const ojson* calls = field(msg, "tool_calls")) {
    if (t.role != "assistant") bad(at + ".tool_calls", "'" + at + ".tool_calls' is for assistant messages");
    if (!calls->is_array()) bad(at + ".tool_calls", "'" + at + ".tool_calls' must be an array");
    for (const ojson& c : *calls) {
      const ojson* fn = c.is_object() ? field(c, "function") : nullptr;
      const ojson* name = fn && fn->is_object() ? field(*fn, "name") : nullptr;
      const ojson* args = fn && fn->is_object() ? field(*fn, "arguments") : nullptr;
      if (!name || !name->is_string() || (args && !args->is_string() && !args->is_object())) {
        bad(at + ".tool_calls", "'" + at + ".tool_calls' entries must be {\"type\": \"function\", \"function\": {\"name\": STRING, \"arguments\": STRING}}");
      }
      to_value(c, 0);
    }
    if (!calls->empty()) t.tool_calls = calls->dump();
    t.null_content = !field(msg, "content");
  }
  for (const char* key : {"tool_call_id", "name"}) {
    const ojson* v = field(msg, key);
    if (!v) continue;
    if (!v->is_string()) bad(at + "." + key, "'" + at + "." + key + "' must be a string");
    (std::string(key) == "name" ? t.name : t.tool_call_id) = v->get<std::string>();
  }
}

ojson tool_calls_json(const std::vector<ToolCall>& calls, bool stream) {
  ojson out = ojson::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    ojson c;
    if (stream) c["index"] = i;
    c["id"] = calls[i].id;
    c["type"] = "function";
    c["function"] = ojson{{"name", calls[i].name}, {"arguments", calls[i].arguments}};
    out.push_back(std::move(c));
  }
  return out;
}

bool uses_tools(const Request& r) {
  if (!r.tools.empty()) return true;
  return std::any_of(r.messages.begin(), r.messages.end(),
                     [](const Turn& t) { return !t.tool_calls.empty() || !t.tool_call_id.empty() || !t.name.empty(); });
}

Value template_messages(const Request& r) {
  std::vector<Value> list;
  for (const Turn& t : r.messages) {
    std::vector<std::pair<std::string, Value>> m{{"role", Value(t.role)},
                                                 {"content", t.null_content ? Value::none() : Value(t.content)}};
    if (!t.tool_calls.empty()) {
      ojson calls = ojson::parse(t.tool_calls);
      for (ojson& c : calls) {  // templates write the arguments with tojson: an object, as transformers'
        ojson& args = c["function"]["arguments"];
        if (args.is_string()) {
          ojson parsed = ojson::parse(args.get<std::string>(), nullptr, false);
          if (parsed.is_object()) args = std::move(parsed);
        }
      }
      m.emplace_back("tool_calls", to_value(calls, 0));
    }
    if (!t.tool_call_id.empty()) m.emplace_back("tool_call_id", Value(t.tool_call_id));
    if (!t.name.empty()) m.emplace_back("name", Value(t.name));
    list.push_back(Value::make_dict(std::move(m)));
  }
  return Value::list(std::move(list));
}

Value template_tools(const Request& r) {
  if (r.tools.empty() || r.tool_choice == ToolChoice::none) return Value::none();
  return to_value(ojson::parse(r.tools), 0);
}

ToolFormat tool_format(const std::string& src) {
  if (src.find("<tool_call>") != std::string::npos) return ToolFormat::hermes;
  if (src.find("[TOOL_CALLS]") != std::string::npos) return ToolFormat::mistral;
  if (src.find("<|python_tag|>") != std::string::npos || src.find("\"parameters\"") != std::string::npos) {
    return ToolFormat::llama3;
  }
  return ToolFormat::generic;
}

std::string forced_tool_gbnf(const Request& r, ToolFormat f) {
  if (r.tool_choice != ToolChoice::required && r.tool_choice != ToolChoice::named) return "";
  SchemaGrammar g("tools");
  const std::string key = f == ToolFormat::llama3 ? "parameters" : "arguments";
  std::string calls;
  for (const ojson& t : ojson::parse(r.tools)) {
    const std::string name = t["function"]["name"].get<std::string>();
    if (r.tool_choice == ToolChoice::named && name != r.tool_name) continue;
    const ojson* params = field(t["function"], "parameters");
    const std::string args = g.add(params ? *params : ojson{{"type", "object"}});
    calls += (calls.empty() ? "" : " | ") + std::string("\"{\" ws ") + gbnf_literal("\"name\"") + " ws \":\" ws " +
             gbnf_literal(ojson(name).dump()) + " ws \",\" ws " + gbnf_literal("\"" + key + "\"") + " ws \":\" ws " + args +
             " ws \"}\"";
  }
  std::string root;
  switch (f) {
    case ToolFormat::hermes: root = "\"<tool_call>\\n\" call \"\\n</tool_call>\""; break;
    case ToolFormat::mistral: root = "\"[\" call \"]\""; break;  // [TOOL_CALLS] is a control token: the parser takes the array alone
    default: root = "call"; break;
  }
  return "root ::= " + root + "\ncall ::= " + calls + "\n" + g.rules();
}

bool parses_tool_calls(const Request& r) { return !r.tools.empty() && r.tool_choice != ToolChoice::none; }

std::vector<ToolCall> parse_tool_calls(const std::string& text, const Request& r, std::string& content) {
  content = text;
  std::vector<ToolCall> calls;
  if (!parses_tool_calls(r)) return calls;
  const std::vector<std::string> names = tool_names(r);
  // Hermes: <tool_call> blocks anywhere; the text around them is the content.
  if (text.find("<tool_call>") != std::string::npos) {
    std::string rest;
    size_t pos = 0;
    for (size_t open; (open = text.find("<tool_call>", pos)) != std::string::npos;) {
      rest += text.substr(pos, open - pos);
      const size_t body = open + 11, close = text.find("</tool_call>", body);
      if (!json_calls(text.substr(body, close == std::string::npos ? std::string::npos : close - body), names, calls)) {
        calls.clear();
        return calls;
      }
      pos = close == std::string::npos ? text.size() : close + 12;
    }
    rest += text.substr(pos);
    rest.erase(0, rest.find_first_not_of(" \t\r\n"));
    rest.erase(rest.find_last_not_of(" \t\r\n") + 1);
    content = rest;
    return calls;
  }
  if (json_calls(text, names, calls)) {
    content.clear();
  } else {
    calls.clear();
  }
  return calls;
}

std::string ToolCallStream::push(const std::string& text) {
  if (!parses_tool_calls(r_)) return text;
  held_ += text;
  static const std::string kTag = "<tool_call>";
  if (!content_) {
    const size_t first = held_.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    const std::string start = held_.substr(first);
    bool maybe_call = start[0] == '{' || start[0] == '[';
    for (const std::string& marker : {kTag, std::string("<|python_tag|>"), std::string("[TOOL_CALLS]"), std::string("```")}) {
      maybe_call = maybe_call || start.compare(0, std::min(start.size(), marker.size()), marker, 0,
                                               std::min(start.size(), marker.size())) == 0;
    }
    if (maybe_call) return "";
    content_ = true;
  }
  // Content: pass it on, but hold back from a <tool_call> (or what may become one) on.
  size_t keep = held_.find(kTag);
  if (keep == std::string::npos) {
    keep = held_.size();
    for (size_t n = std::min(held_.size(), kTag.size() - 1); n > 0; --n) {
      if (held_.compare(held_.size() - n, n, kTag, 0, n) == 0) {
        keep = held_.size() - n;
        break;
      }
    }
  }
  std::string out = held_.substr(0, keep);
  held_.erase(0, keep);
  return out;
}

std::vector<ToolCall> ToolCallStream::finish(std::string& content) {
  std::vector<ToolCall> calls = parse_tool_calls(held_, r_, content);
  held_.clear();
  return calls;
}

}  // namespace qmm::serve
