#include "apps_protocol.h"

#include <algorithm>
#include <cstring>

namespace qmm::serve {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& param, const std::string& message) { throw ApiError(400, message, param); }

const json* field(const json& body, const char* name) {  // nullptr when absent or null
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

json parse_object(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) throw ApiError(400, "the request body is not valid JSON");
  if (!j.is_object()) throw ApiError(400, "the request body must be a JSON object");
  return j;
}

bool flag(const json& body, const char* name, bool def) {
  const json* v = field(body, name);
  if (!v) return def;
  if (!v->is_boolean()) bad(name, std::string("'") + name + "' must be a boolean");
  return v->get<bool>();
}

// An integer lo..hi (nullopt when absent).
std::optional<int64_t> bounded(const json& body, const char* name, int64_t lo, int64_t hi) {
  const json* v = field(body, name);
  if (!v) return std::nullopt;
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  if (!v->is_number_integer()) bad(name, std::string("'") + name + "' must be an integer in " + range);
  if ((v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) || v->get<int64_t>() < lo ||
      v->get<int64_t>() > hi) {
    bad(name, std::string("'") + name + "' must be in " + range + ", got " + v->dump());
  }
  return v->get<int64_t>();
}

// Token ids: a non-empty array of integers 0..INT32_MAX (the vocabulary is the backend's to check).
bool ids_array(const json& p) {
  return p.is_array() && !p.empty() && std::all_of(p.begin(), p.end(), [](const json& t) { return t.is_number_integer(); });
}
std::vector<int32_t> ids(const json& p, const std::string& param) {
  std::vector<int32_t> out;
  for (const json& t : p) {
    if (t.is_number_unsigned() ? t.get<uint64_t>() > INT32_MAX : t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX) {
      bad(param, "'" + param + "' token ids must be in the vocabulary, got " + t.dump());
    }
    out.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return out;
}

ojson bytes_json(const std::string& s) {
  ojson b = ojson::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

// JSON of a logprob: a float (-inf, which JSON lacks, as the lowest float: -9999 would be a lie too).
double finite(float x) { return x >= -3.4e38f ? x : -3.4e38; }

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

}  // namespace

void parse_logprobs(const json& body, Request& r) {
  int n = -1;
  const json* lp = field(body, "logprobs");
  if (r.endpoint == Endpoint::chat) {
    // OpenAI: logprobs true, then top_logprobs 0..20 alternatives.
    const bool on = flag(body, "logprobs", false);
    const std::optional<int64_t> top = bounded(body, "top_logprobs", 0, kMaxTopLogprobs);
    if (top && *top > 0 && !on) bad("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    if (on) n = static_cast<int>(top.value_or(0));
  } else {
    // The legacy completions: logprobs N (0..20) alternatives; false or null is off.
    if (field(body, "top_logprobs") && *field(body, "top_logprobs") != 0) {
      bad("top_logprobs", "'top_logprobs' is for chat completions; here 'logprobs' takes the number");
    }
    if (lp && !(lp->is_boolean() && !lp->get<bool>())) n = static_cast<int>(*bounded(body, "logprobs", 0, kMaxTopLogprobs));
  }
  // llama-server's n_probs: as many alternatives, in this endpoint's shape.
  if (const std::optional<int64_t> np = bounded(body, "n_probs", 0, kMaxNProbs); np && *np > 0) {
    n = std::max(n, static_cast<int>(*np));
  }
  r.logprobs = n;
}

ojson logprobs_json(Endpoint ep, const std::vector<TokenLogprob>& lp) {
  if (ep == Endpoint::chat) {
    ojson content = ojson::array();
    for (const TokenLogprob& t : lp) {
      ojson top = ojson::array();
      for (const TokenAlt& a : t.top) {
        top.push_back(ojson{{"token", a.token}, {"logprob", finite(a.logprob)}, {"bytes", bytes_json(a.token)}});
      }
      content.push_back(ojson{{"token", t.chosen.token},
                              {"logprob", finite(t.chosen.logprob)},
                              {"bytes", bytes_json(t.chosen.token)},
                              {"top_logprobs", std::move(top)}});
    }
    return ojson{{"content", std::move(content)}, {"refusal", nullptr}};
  }
  ojson tokens = ojson::array(), token_lp = ojson::array(), top = ojson::array(), offsets = ojson::array();
  for (const TokenLogprob& t : lp) {
    tokens.push_back(t.chosen.token);
    token_lp.push_back(finite(t.chosen.logprob));
    ojson alts = ojson::object();
    for (const TokenAlt& a : t.top) {
      if (!alts.contains(a.token)) alts[a.token] = finite(a.logprob);  // (two tokens may print alike)
    }
    top.push_back(std::move(alts));
    offsets.push_back(t.offset);
  }
  return ojson{{"tokens", std::move(tokens)}, {"token_logprobs", std::move(token_lp)}, {"top_logprobs", std::move(top)},
               {"text_offset", std::move(offsets)}};
}

TokenizeRequest parse_tokenize(std::string_view body) {
  const json j = parse_object(body);
  TokenizeRequest r;
  const json* c = field(j, "content");
  if (!c || !c->is_string()) bad("content", "'content' is required and must be a string");
  r.content = c->get<std::string>();
  r.add_special = flag(j, "add_special", false);
  r.with_pieces = flag(j, "with_pieces", false);
  if (!flag(j, "parse_special", true)) {
    bad("parse_special", "'parse_special': false is not supported (special tokens written in the text are always recognised)");
  }
  return r;
}

std::string tokenize_body(const std::vector<int32_t>& token_ids, const std::vector<std::string>* pieces) {
  ojson tokens = ojson::array();
  for (size_t i = 0; i < token_ids.size(); ++i) {
    if (!pieces) {
      tokens.push_back(token_ids[i]);
      continue;
    }
    const std::string& p = (*pieces)[i];
    tokens.push_back(ojson{{"id", token_ids[i]}, {"piece", valid_utf8(p) ? ojson(p) : bytes_json(p)}});
  }
  return dump(ojson{{"tokens", std::move(tokens)}});
}

std::vector<int32_t> parse_detokenize(std::string_view body) {
  const json j = parse_object(body);
  const json* t = field(j, "tokens");
  if (!t || !t->is_array()) bad("tokens", "'tokens' is required and must be an array of token ids");
  if (t->empty()) return {};
  if (!ids_array(*t)) bad("tokens", "'tokens' must be an array of integer token ids");
  return ids(*t, "tokens");
}

std::string detokenize_body(const std::string& content) { return dump(ojson{{"content", content}}); }

EmbeddingRequest parse_embeddings(std::string_view body) {
  const json j = parse_object(body);
  EmbeddingRequest e;
  Request& r = e.inputs;
  r.endpoint = Endpoint::embedding;
  // llama-server also takes "content"; "input" is OpenAI's.
  const json* in = field(j, "input");
  if (!in) in = field(j, "content");
  if (!in) bad("input", "'input' is required");
  std::vector<Request::Prompt> inputs;
  auto one = [](const json& x) {
    Request::Prompt p;
    if (x.is_string()) {
      p.text = x.get<std::string>();
    } else {
      p.ids = ids(x, "input");
    }
    return p;
  };
  if (in->is_string() || ids_array(*in)) {
    inputs.push_back(one(*in));
  } else if (in->is_array() && !in->empty() &&
             std::all_of(in->begin(), in->end(), [](const json& x) { return x.is_string() || ids_array(x); })) {
    if (in->size() > kMaxEmbeddingInputs) {
      bad("input", "'input' holds more than " + std::to_string(kMaxEmbeddingInputs) + " inputs");
    }
    for (const json& x : *in) inputs.push_back(one(x));
  } else {
    bad("input", "'input' must be a string, token ids, or a non-empty array of those");
  }
  r.prompt = std::move(inputs[0].text);
  r.prompt_ids = std::move(inputs[0].ids);
  r.more_prompts.assign(std::make_move_iterator(inputs.begin() + 1), std::make_move_iterator(inputs.end()));
  if (const json* m = field(j, "model")) {
    if (!m->is_string()) bad("model", "'model' must be a string");
    r.model = m->get<std::string>();
  }
  if (const json* f = field(j, "encoding_format")) {
    if (*f != "float" && *f != "base64") bad("encoding_format", "'encoding_format' must be 'float' or 'base64'");
    e.base64 = *f == "base64";
  }
  e.dimensions = bounded(j, "dimensions", 1, INT32_MAX);
  if (const json* u = field(j, "user"); u && !u->is_string()) bad("user", "'user' must be a string");
  for (const auto& [key, value] : j.items()) {
    static const char* const kKnown[] = {"input", "content", "model", "encoding_format", "dimensions", "user"};
    if (value.is_null() || std::any_of(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return key == k; })) continue;
    bad(key, "'" + key + "' is not supported by qmm serve's /v1/embeddings");
  }
  return e;
}

std::string base64_floats(const std::vector<float>& v) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {  // little-endian float32, whatever this machine is
    uint32_t u;
    std::memcpy(&u, &v[i], 4);
    for (size_t k = 0; k < 4; ++k) bytes[4 * i + k] = static_cast<char>((u >> (8 * k)) & 0xff);
  }
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t w = 0;
    for (size_t k = 0; k < 3; ++k) w = (w << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(w >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::string embeddings_body(const std::string& model, const std::vector<std::vector<float>>& vectors, bool base64,
                            size_t prompt_tokens) {
  ojson data = ojson::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    data.push_back(ojson{{"object", "embedding"},
                         {"index", i},
                         {"embedding", base64 ? ojson(base64_floats(vectors[i])) : ojson(vectors[i])}});
  }
  return dump(ojson{{"object", "list"},
                    {"data", std::move(data)},
                    {"model", model},
                    {"usage", ojson{{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}});
}

}  // namespace qmm::serve
