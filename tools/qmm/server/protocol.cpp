#include "protocol.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "apps_protocol.h"

namespace qmm::serve {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr size_t kMaxStops = 16;

[[noreturn]] void bad(const std::string& param, const std::string& message) { throw ApiError(400, message, param); }

const json* field(const json& body, const char* name) {  // nullptr when absent or null
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

double number(const json& body, const char* name, double lo, double hi, double def) {
  const json* v = field(body, name);
  if (!v) return def;
  if (!v->is_number()) bad(name, std::string("'") + name + "' must be a number");
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi)) {
    bad(name, std::string("'") + name + "' must be between " + json(lo).dump() + " and " + json(hi).dump() +
                  ", got " + v->dump());
  }
  return x;
}

std::optional<int64_t> integer(const json& body, const char* name, int64_t lo) {
  const json* v = field(body, name);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) bad(name, std::string("'") + name + "' must be an integer");
  const int64_t x = v->is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(v->get<uint64_t>(), INT64_MAX))
                                            : v->get<int64_t>();
  if (x < lo) bad(name, std::string("'") + name + "' must be at least " + std::to_string(lo) + ", got " + v->dump());
  return x;
}

bool boolean(const json& body, const char* name, const std::string& param) {
  const json* v = field(body, name);
  if (!v) return false;
  if (!v->is_boolean()) bad(param, "'" + param + "' must be a boolean");
  return v->get<bool>();
}

// A message's content: a string, or an array of {"type":"text","text":...} parts.
std::string content_text(const json& c, const std::string& param) {
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) bad(param, "'" + param + "' must be a string or an array of text parts");
  std::string out;
  for (const json& part : c) {
    const json* type = part.is_object() ? field(part, "type") : nullptr;
    const json* text = part.is_object() ? field(part, "text") : nullptr;
    if (!type || *type != "text" || !text || !text->is_string()) {
      bad(param, "'" + param + "' parts must be {\"type\": \"text\", \"text\": STRING} (only text is supported)");
    }
    out += text->get<std::string>();
  }
  return out;
}

std::vector<Turn> parse_messages(const json& body) {
  const json* m = field(body, "messages");
  if (!m) bad("messages", "'messages' is required");
  if (!m->is_array()) bad("messages", "'messages' must be an array");
  if (m->empty()) bad("messages", "'messages' must contain at least one message");
  std::vector<Turn> turns;
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) bad(at, "'" + at + "' must be an object");
    const json* role = field(msg, "role");
    if (!role || !role->is_string()) bad(at + ".role", "'" + at + ".role' is required and must be a string");
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";  // OpenAI's newer name for the system prompt
    if (r != "system" && r != "user" && r != "assistant") {
      bad(at + ".role", "'" + at + ".role' must be 'system', 'developer', 'user' or 'assistant', got " + role->dump());
    }
    const json* content = field(msg, "content");
    if (!content && r != "assistant") bad(at + ".content", "'" + at + ".content' is required");
    turns.push_back({r, content ? content_text(*content, at + ".content") : std::string()});
  }
  return turns;
}

bool token_ids(const json& p) {
  if (!p.is_array() || p.empty()) return false;
  for (const json& t : p) {
    if (!t.is_number_integer()) return false;
  }
  return true;
}

// One prompt: a string or token ids.
Request::Prompt one_prompt(const json& p) {
  Request::Prompt out;
  if (p.is_string()) {
    out.text = p.get<std::string>();
    return out;
  }
  for (const json& t : p) {
    const int64_t id = t.is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(t.get<uint64_t>(), INT32_MAX))
                                              : t.get<int64_t>();
    if (id < 0 || id > INT32_MAX) bad("prompt", "'prompt' token ids must be in the vocabulary, got " + t.dump());
    out.ids.push_back(static_cast<int32_t>(id));
  }
  return out;
}

// A string, token ids, or an array of those: several prompts, one choice each (as OpenAI).
void parse_prompt(const json& body, Request& r) {
  constexpr size_t kMaxPrompts = 64;
  const json* p = field(body, "prompt");
  if (!p) bad("prompt", "'prompt' is required");
  std::vector<Request::Prompt> prompts;
  if (p->is_string() || token_ids(*p)) {
    prompts.push_back(one_prompt(*p));
  } else if (p->is_array() && !p->empty() &&
             std::all_of(p->begin(), p->end(), [](const json& x) { return x.is_string() || token_ids(x); })) {
    if (p->size() > kMaxPrompts) bad("prompt", "'prompt' holds more than " + std::to_string(kMaxPrompts) + " prompts");
    for (const json& x : *p) prompts.push_back(one_prompt(x));
  } else {
    bad("prompt", "'prompt' must be a string, token ids, or an array of those");
  }
  r.prompt = std::move(prompts[0].text);
  r.prompt_ids = std::move(prompts[0].ids);
  r.more_prompts.assign(std::make_move_iterator(prompts.begin() + 1), std::make_move_iterator(prompts.end()));
}

// Fields of OpenAI's API and llama-server's that qmm does not implement, each with the values
// that change nothing (a JSON array; null is always accepted). Any other value is a 400 naming
// the field, so that no client is silently served something it did not ask for.
struct Unimplemented {
  const char* name;
  const char* harmless;
};
constexpr Unimplemented kUnimplemented[] = {
    {"tools", "[[]]"},                  {"tool_choice", R"(["none","auto"])"},
    {"functions", "[[]]"},              {"function_call", R"(["none","auto"])"},
    {"response_format", R"([{"type":"text"}])"},
    {"logit_bias", "[{}]"},             {"echo", "[false]"},
    {"suffix", R"([""])"},              {"best_of", "[1]"},
    {"audio", "[]"},                    {"prediction", "[]"},
    {"modalities", R"([["text"]])"},    {"reasoning_effort", "[]"},
    {"web_search_options", "[]"},       {"grammar", R"([""])"},
    {"json_schema", "[{}]"},
    {"typical_p", "[1]"},               {"tfs_z", "[1]"},
    {"mirostat", "[0]"},                {"dynatemp_range", "[0]"},
    {"xtc_probability", "[0]"},         {"dry_multiplier", "[0]"},
    {"top_n_sigma", "[-1]"},
    // llama-server's default order (what its web UI sends): with the samplers qmm lacks off, it
    // is qmm's order.
    {"samplers", R"(["edkypmxt", ["dry","top_k","typ_p","top_p","min_p","xtc","temperature"]])"},
    {"n_keep", "[0,-1]"},               {"min_keep", "[0]"},
    {"penalize_nl", "[false]"},         {"lora", "[[]]"},
    {"id_slot", "[-1]"},                {"post_sampling_probs", "[false]"},
    {"return_tokens", "[false]"},       {"n_indent", "[0]"},
    {"t_max_predict_ms", "[0]"},        {"image_data", "[[]]"},
};

void refuse_unimplemented(const json& body) {
  for (const Unimplemented& u : kUnimplemented) {
    const json* v = field(body, u.name);
    if (!v) continue;
    const json ok = json::parse(u.harmless);
    if (std::find(ok.begin(), ok.end(), *v) != ok.end()) continue;
    bad(u.name, std::string("'") + u.name + "' is not supported by qmm serve" +
                    (ok.empty() ? std::string() : " (only " + ok[0].dump() + ", which changes nothing)"));
  }
}

std::vector<std::string> parse_stop(const json& body) {
  const json* s = field(body, "stop");
  if (!s) return {};
  std::vector<std::string> out;
  if (s->is_string()) {
    out.push_back(s->get<std::string>());
  } else if (s->is_array() && s->size() <= kMaxStops) {
    for (const json& x : *s) {
      if (!x.is_string()) bad("stop", "'stop' must be a string or an array of strings");
      out.push_back(x.get<std::string>());
    }
  } else {
    bad("stop", "'stop' must be a string or an array of at most " + std::to_string(kMaxStops) + " strings");
  }
  for (const std::string& x : out) {
    if (x.empty()) bad("stop", "'stop' strings must not be empty");
  }
  return out;
}

ojson head_json(const ResponseHead& h, bool chunk) {
  const bool chat = h.endpoint == Endpoint::chat;
  return ojson{{"id", h.id},
               {"object", chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
               {"created", h.created},
               {"model", h.model}};
}

ojson usage_json(const Usage& u) {
  return ojson{{"prompt_tokens", u.prompt_tokens},
               {"completion_tokens", u.completion_tokens},
               {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

// A chunk with one choice: `delta` for chat, `text` for completions.
std::string chunk_with(const ResponseHead& h, ojson delta, const std::string& text, const char* finish, size_t index = 0,
                       const std::vector<TokenLogprob>* logprobs = nullptr) {
  ojson j = head_json(h, true);
  ojson choice{{"index", index}};
  if (h.endpoint == Endpoint::chat) {
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = text;
  }
  choice["logprobs"] = logprobs ? logprobs_json(h.endpoint, *logprobs) : ojson(nullptr);
  choice["finish_reason"] = finish ? ojson(finish) : ojson(nullptr);
  j["choices"] = ojson::array({std::move(choice)});
  return dump(j);
}

}  // namespace

const char* ApiError::type() const {
  switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 503: return "unavailable_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

Request parse_request(std::string_view body, Endpoint endpoint) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    throw ApiError(400, std::string("the request body is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ApiError(400, "the request body must be a JSON object");
  Request r;
  r.endpoint = endpoint;
  if (endpoint == Endpoint::chat) {
    r.messages = parse_messages(j);
  } else {
    parse_prompt(j, r);
  }
  refuse_unimplemented(j);
  parse_logprobs(j, r);
  if (const json* m = field(j, "model")) {
    if (!m->is_string()) bad("model", "'model' must be a string");
    r.model = m->get<std::string>();
  }
  // max_completion_tokens is the newer name of max_tokens, n_predict llama-server's (-1: no
  // limit); one may be given. 0 answers the usage of the prompt with an empty completion.
  std::optional<int64_t> max = integer(j, "max_completion_tokens", 0);
  if (!max) max = integer(j, "max_tokens", 0);
  if (!max) max = integer(j, "n_predict", -1);
  if (max && *max >= 0) r.max_tokens = static_cast<size_t>(*max);
  if (const std::optional<int64_t> n = integer(j, "n", 1); n && *n != 1) bad("n", "only 'n' = 1 is supported");
  r.temperature = static_cast<float>(number(j, "temperature", 0, 2, 1));
  r.top_p = static_cast<float>(number(j, "top_p", 0, 1, 1));
  r.min_p = static_cast<float>(number(j, "min_p", 0, 1, 0));
  r.frequency_penalty = static_cast<float>(number(j, "frequency_penalty", -2, 2, 0));  // OpenAI's range
  r.presence_penalty = static_cast<float>(number(j, "presence_penalty", -2, 2, 0));
  r.repeat_penalty = static_cast<float>(number(j, "repeat_penalty", 1e-6, 1e6, 1));
  if (const std::optional<int64_t> n = integer(j, "repeat_last_n", -1)) {  // -1: the whole context
    r.repeat_last_n = *n < 0 ? size_t{1} << 30 : static_cast<size_t>(std::min<int64_t>(*n, 1 << 30));
  }
  if (const std::optional<int64_t> k = integer(j, "top_k", 0)) r.top_k = static_cast<int>(std::min<int64_t>(*k, 1 << 30));
  if (const std::optional<int64_t> s = integer(j, "seed", INT64_MIN); s && *s >= 0) r.seed = static_cast<uint64_t>(*s);
  r.stop = parse_stop(j);
  r.stream = boolean(j, "stream", "stream");
  r.ignore_eos = boolean(j, "ignore_eos", "ignore_eos");
  if (const json* so = field(j, "stream_options")) {
    if (!so->is_object()) bad("stream_options", "'stream_options' must be an object");
    r.include_usage = boolean(*so, "include_usage", "stream_options.include_usage");
  }
  return r;
}

std::vector<Request> split_prompts(Request r) {
  std::vector<Request::Prompt> more = std::move(r.more_prompts);
  r.more_prompts.clear();
  std::vector<Request> out{r};
  for (Request::Prompt& p : more) {
    out.push_back(r);
    out.back().prompt = std::move(p.text);
    out.back().prompt_ids = std::move(p.ids);
  }
  return out;
}

const char* finish_name(Finish f) { return f == Finish::stop ? "stop" : "length"; }

std::string error_body(const ApiError& e) {
  const auto null_or = [](const std::string& s) { return s.empty() ? ojson(nullptr) : ojson(s); };
  return dump(ojson{{"error", ojson{{"message", e.what()}, {"type", e.type()}, {"param", null_or(e.param)},
                                    {"code", null_or(e.code)}}}});
}

std::string completion_body(const ResponseHead& h, const std::vector<Choice>& choices, const Usage& u) {
  ojson j = head_json(h, false);
  j["choices"] = ojson::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    ojson choice{{"index", i}};
    if (h.endpoint == Endpoint::chat) {
      choice["message"] = ojson{{"role", "assistant"}, {"content", choices[i].text}};
    } else {
      choice["text"] = choices[i].text;
    }
    choice["logprobs"] = choices[i].logprobs ? logprobs_json(h.endpoint, *choices[i].logprobs) : ojson(nullptr);
    choice["finish_reason"] = finish_name(choices[i].finish);
    j["choices"].push_back(std::move(choice));
  }
  j["usage"] = usage_json(u);
  return dump(j);
}

std::string role_chunk(const ResponseHead& h) {
  return chunk_with(h, ojson{{"role", "assistant"}, {"content", ""}}, "", nullptr);
}

std::string text_chunk(const ResponseHead& h, const std::string& text, size_t index,
                       const std::vector<TokenLogprob>* logprobs) {
  return chunk_with(h, ojson{{"content", text}}, text, nullptr, index, logprobs);
}

std::string finish_chunk(const ResponseHead& h, Finish finish, size_t index) {
  return chunk_with(h, ojson::object(), "", finish_name(finish), index);
}

std::string usage_chunk(const ResponseHead& h, const Usage& u) {
  ojson j = head_json(h, true);
  j["choices"] = ojson::array();
  j["usage"] = usage_json(u);
  return dump(j);
}

std::string model_body(const std::string& model_id, int64_t created) {
  return dump(ojson{{"id", model_id}, {"object", "model"}, {"created", created}, {"owned_by", "qmm"}});
}

std::string models_body(const std::string& model_id, int64_t created) {
  ojson m = ojson::parse(model_body(model_id, created));
  return dump(ojson{{"object", "list"}, {"data", ojson::array({std::move(m)})}});
}

std::string sse_event(std::string_view payload) {
  std::string s = "data: ";
  s.append(payload);
  s += "\n\n";
  return s;
}

}  // namespace qmm::serve
