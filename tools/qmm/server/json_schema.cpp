#include "json_schema.h"

#include <map>
#include <set>
#include <vector>

#include "protocol.h"

namespace qmm::serve {
namespace {

using ojson = nlohmann::ordered_json;

constexpr size_t kMaxDepth = 64;          // nested schemas
constexpr size_t kMaxRules = 20000;
constexpr size_t kMaxGrammarBytes = 1 << 20;
constexpr size_t kMaxItems = 1000;        // maxItems / maxLength a grammar spells out

// The shared rules: whitespace (bounded, so a model cannot pad forever), strings, numbers, any value.
constexpr const char* kCommon = R"(ws ::= " "? | "\n" [ \t]{0,16}
string ::= "\"" char* "\""
char ::= [^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
integer ::= "-"? ("0" | [1-9] [0-9]{0,15})
number ::= integer ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws (string ws ":" ws value (ws "," ws string ws ":" ws value)*)? ws "}"
array ::= "[" ws (value (ws "," ws value)*)? ws "]"
date ::= [0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01])
time ::= ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])
hex4 ::= [0-9a-fA-F]{4}
)";

// Keywords that only describe: they change nothing a grammar could enforce.
const std::set<std::string> kAnnotations = {"title", "description", "default", "examples", "$schema", "$id",
                                            "$comment", "deprecated", "readOnly", "writeOnly", "$defs",
                                            "definitions", "strict"};

}  // namespace

std::string gbnf_literal(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      static const char* hex = "0123456789ABCDEF";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

class SchemaGrammar::Converter {
 public:
  explicit Converter(std::string param) : param_(std::move(param)) {}

  std::string convert(const ojson& schema) {
    root_ = &schema;
    refs_.clear();
    return visit(schema, 0);
  }
  std::string text() const {
    std::string out = kCommon;
    for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
    if (out.size() > kMaxGrammarBytes) bad("the schema's grammar is larger than 1 MiB");
    return out;
  }

 private:
  [[noreturn]] void bad(const std::string& why) const { throw ApiError(400, "'" + param_ + "': " + why, param_); }

  std::string add(const std::string& body) {
    if (rules_.size() >= kMaxRules) bad("the schema needs more than " + std::to_string(kMaxRules) + " grammar rules");
    bytes_ += body.size();
    if (bytes_ > kMaxGrammarBytes) bad("the schema's grammar is larger than 1 MiB");
    const std::string name = "s" + std::to_string(rules_.size());
    rules_.emplace_back(name, body);
    return name;
  }
  void set(const std::string& name, const std::string& body) {
    for (auto& r : rules_) {
      if (r.first == name) r.second = body;
    }
  }

  size_t count(const ojson& s, const char* key, size_t def) const {
    const auto it = s.find(key);
    if (it == s.end()) return def;
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
      bad(std::string("'") + key + "' must be a non-negative integer");
    }
    return static_cast<size_t>(std::min<uint64_t>(it->get<uint64_t>(), SIZE_MAX / 2));
  }

  const ojson& resolve(const std::string& ref) const {
    const ojson& root = *root_;
    if (ref == "#") return root;
    for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
      const std::string p = prefix;
      if (ref.compare(0, p.size(), p) != 0) continue;
      const std::string key = p.substr(2, p.size() - 3);
      const auto defs = root.find(key);
      if (defs != root.end() && defs->is_object()) {
        const auto it = defs->find(ref.substr(p.size()));
        if (it != defs->end()) return *it;
      }
      bad("'$ref' " + ref + " is not defined in the schema");
    }
    bad("'$ref' " + ref + " is not supported (only #, #/$defs/NAME and #/definitions/NAME)");
  }

  std::string alternatives(const ojson& list, const char* key, size_t depth) {
    if (!list.is_array() || list.empty()) bad(std::string("'") + key + "' must be a non-empty array");
    std::string body;
    for (const ojson& s : list) body += (body.empty() ? "" : " | ") + visit(s, depth + 1);
    return add(body);
  }

  std::string visit(const ojson& s, size_t depth) {
    if (depth > kMaxDepth) bad("the schema is nested deeper than " + std::to_string(kMaxDepth));
    if (s.is_boolean()) {
      if (!s.get<bool>()) bad("the schema 'false' matches nothing");
      return "value";
    }
    if (!s.is_object()) bad("a schema must be an object or a boolean, got " + s.dump());
    if (const auto it = s.find("$ref"); it != s.end()) {
      if (!it->is_string()) bad("'$ref' must be a string");
      const std::string ref = it->get<std::string>();
      if (const auto m = refs_.find(ref); m != refs_.end()) return m->second;
      const std::string name = add("null");  // a placeholder: the target may refer to itself
      refs_[ref] = name;
      set(name, visit(resolve(ref), depth + 1));
      return name;
    }
    for (const auto& [key, v] : s.items()) {
      if (kAnnotations.count(key)) continue;
      static const std::set<std::string> known = {"type", "properties", "required", "additionalProperties", "enum",
                                                  "const", "anyOf", "oneOf", "allOf", "items", "prefixItems",
                                                  "minItems", "maxItems", "minLength", "maxLength", "format"};
      if (!known.count(key)) bad("the JSON schema keyword '" + key + "' is not supported by qmm serve");
    }
    if (const auto it = s.find("const"); it != s.end()) return add(gbnf_literal(it->dump()));
    if (const auto it = s.find("enum"); it != s.end()) {
      if (!it->is_array() || it->empty()) bad("'enum' must be a non-empty array");
      std::string body;
      for (const ojson& v : *it) body += (body.empty() ? "" : " | ") + gbnf_literal(v.dump());
      return add(body);
    }
    if (const auto it = s.find("anyOf"); it != s.end()) return alternatives(*it, "anyOf", depth);
    if (const auto it = s.find("oneOf"); it != s.end()) return alternatives(*it, "oneOf", depth);
    if (const auto it = s.find("allOf"); it != s.end()) {
      if (!it->is_array() || it->size() != 1) bad("'allOf' is supported with one schema only");
      return visit((*it)[0], depth + 1);
    }
    const auto type = s.find("type");
    if (type == s.end()) {
      if (s.contains("properties")) return object(s, depth);
      if (s.contains("items") || s.contains("prefixItems")) return array(s, depth);
      return "value";
    }
    if (type->is_array()) {
      if (type->empty()) bad("'type' must not be an empty array");
      std::string body;
      for (const ojson& t : *type) body += (body.empty() ? "" : " | ") + typed(s, t, depth);
      return add(body);
    }
    return typed(s, *type, depth);
  }

  std::string typed(const ojson& s, const ojson& type, size_t depth) {
    const std::string t = type.is_string() ? type.get<std::string>() : std::string();
    if (t == "object") return object(s, depth);
    if (t == "array") return array(s, depth);
    if (t == "string") return string(s);
    if (t == "number" || t == "integer" || t == "boolean" || t == "null") return t;
    bad("'type' " + type.dump() + " is not a JSON schema type");
  }

  std::string string(const ojson& s) {
    if (const auto f = s.find("format"); f != s.end()) {
      const std::string fmt = f->is_string() ? f->get<std::string>() : std::string();
      if (fmt == "date" || fmt == "time") return add("\"\\\"\" " + fmt + " \"\\\"\"");
      if (fmt == "date-time") return add("\"\\\"\" date \"T\" time \"\\\"\"");
      if (fmt == "uuid") return add("\"\\\"\" hex4 hex4 \"-\" hex4 \"-\" hex4 \"-\" hex4 \"-\" hex4 hex4 hex4 \"\\\"\"");
      bad("the string format " + f->dump() + " is not supported (only date, time, date-time and uuid)");
    }
    const size_t min = count(s, "minLength", 0), max = count(s, "maxLength", SIZE_MAX);
    if (min == 0 && max == SIZE_MAX) return "string";
    if (max < min) bad("'maxLength' is below 'minLength'");
    if (min > kMaxItems || (max != SIZE_MAX && max > kMaxItems)) {
      bad("'minLength' and 'maxLength' above " + std::to_string(kMaxItems) + " are not supported");
    }
    return add("\"\\\"\" char{" + std::to_string(min) + "," + (max == SIZE_MAX ? "" : std::to_string(max)) + "} \"\\\"\"");
  }

  std::string array(const ojson& s, size_t depth) {
    const size_t min = count(s, "minItems", 0), max = count(s, "maxItems", SIZE_MAX);
    if (max < min) bad("'maxItems' is below 'minItems'");
    if (min > kMaxItems || (max != SIZE_MAX && max > kMaxItems)) {
      bad("'minItems' and 'maxItems' above " + std::to_string(kMaxItems) + " are not supported");
    }
    if (const auto p = s.find("prefixItems"); p != s.end()) {  // a tuple
      if (!p->is_array()) bad("'prefixItems' must be an array");
      if (s.contains("items") && s["items"] != false) bad("'prefixItems' with 'items' other than false is not supported");
      std::string body = "\"[\" ws";
      for (size_t i = 0; i < p->size(); ++i) body += (i ? " ws \",\" ws " : " ") + visit((*p)[i], depth + 1);
      return add(body + " ws \"]\"");
    }
    const auto it = s.find("items");
    const std::string item = it == s.end() ? "value" : visit(*it, depth + 1);
    if (max == 0) return add("\"[\" ws \"]\"");
    const std::string more = "(ws \",\" ws " + item + ")";
    const size_t lo = min == 0 ? 0 : min - 1;
    const std::string reps = "{" + std::to_string(lo) + "," + (max == SIZE_MAX ? "" : std::to_string(max - 1)) + "}";
    const std::string list = item + " " + more + reps;
    return add("\"[\" ws " + (min == 0 ? "(" + list + ")?" : list) + " ws \"]\"");
  }

  // Properties in the schema's order, each required one present; optional ones may be left
  // out. first[i]: the rest from property i when nothing was written yet; next[i]: the same
  // after something was (each starts with a comma).
  std::string object(const ojson& s, size_t depth) {
    std::vector<std::pair<std::string, std::string>> props;  // key literal, value rule
    if (const auto p = s.find("properties"); p != s.end()) {
      if (!p->is_object()) bad("'properties' must be an object");
      for (const auto& [k, v] : p->items()) props.emplace_back(gbnf_literal(ojson(k).dump()), visit(v, depth + 1));
    }
    std::set<std::string> required;
    if (const auto r = s.find("required"); r != s.end()) {
      if (!r->is_array()) bad("'required' must be an array of property names");
      for (const ojson& k : *r) {
        if (!k.is_string()) bad("'required' must be an array of property names");
        required.insert(gbnf_literal(ojson(k.get<std::string>()).dump()));
      }
      for (const std::string& k : required) {
        if (std::none_of(props.begin(), props.end(), [&](const auto& p) { return p.first == k; })) {
          bad("'required' names " + k + ", which is not in 'properties'");
        }
      }
    }
    std::string extra;  // the rule of additional properties' values ("" : none allowed)
    if (const auto a = s.find("additionalProperties"); a != s.end() && *a != false) {
      extra = *a == true ? "value" : visit(*a, depth + 1);
    } else if (!s.contains("properties") && a == s.end()) {
      extra = "value";  // {"type":"object"} alone: any object
    }
    const std::string kv_extra = extra.empty() ? "" : add("string ws \":\" ws " + extra);
    std::string first = add(kv_extra.empty() ? "\"\"" : "(" + kv_extra + " (ws \",\" ws " + kv_extra + ")*)?");
    std::string next = add(kv_extra.empty() ? "\"\"" : "(ws \",\" ws " + kv_extra + ")*");
    for (size_t i = props.size(); i-- > 0;) {
      const std::string kv = props[i].first + " ws \":\" ws " + props[i].second;
      const bool req = required.count(props[i].first) > 0;
      const std::string f = add(kv + " " + next + (req ? "" : " | " + first));
      const std::string n = add("ws \",\" ws " + kv + " " + next + (req ? "" : " | " + next));
      first = f;
      next = n;
    }
    return add("\"{\" ws " + first + " ws \"}\"");
  }

  const ojson* root_ = nullptr;
  std::string param_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, std::string> refs_;
  size_t bytes_ = 0;
};

namespace {

[[noreturn]] void bad(const std::string& param, const std::string& message) { throw ApiError(400, message, param); }

const ojson* field(const ojson& body, const char* name) {  // nullptr when absent or null
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

SchemaGrammar::SchemaGrammar(const std::string& param) : c_(std::make_unique<Converter>(param)) {}
SchemaGrammar::~SchemaGrammar() = default;
std::string SchemaGrammar::add(const nlohmann::ordered_json& schema) { return c_->convert(schema); }
std::string SchemaGrammar::rules() const { return c_->text(); }

std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema, const std::string& param) {
  SchemaGrammar g(param);
  const std::string top = g.add(schema);
  return "root ::= " + top + "\n" + g.rules();
}

std::string json_object_gbnf() { return std::string("root ::= object\n") + kCommon; }

// `grammar` (GBNF), llama-server's `json_schema`, or OpenAI's `response_format`: at most one.
std::string request_grammar(const ojson& body, std::string& param) {
  std::vector<std::string> given;
  std::string gbnf;
  if (const ojson* g = field(body, "grammar")) {
    if (!g->is_string()) bad("grammar", "'grammar' must be a string (GBNF)");
    if (!g->get<std::string>().empty()) given.push_back("grammar"), gbnf = g->get<std::string>();
  }
  if (const ojson* s = field(body, "json_schema")) {
    if (!s->is_object() && !s->is_boolean()) bad("json_schema", "'json_schema' must be a JSON schema object");
    if (*s != ojson::object()) given.push_back("json_schema"), gbnf = json_schema_to_gbnf(*s, "json_schema");
  }
  if (const ojson* f = field(body, "response_format")) {
    const ojson* type = f->is_object() ? field(*f, "type") : nullptr;
    if (!type || !type->is_string()) bad("response_format", "'response_format' must be an object with a 'type'");
    const std::string t = type->get<std::string>();
    if (t == "json_object") {  // llama-server also takes a "schema" here
      const ojson* schema = field(*f, "schema");
      gbnf = schema ? json_schema_to_gbnf(*schema, "response_format.schema") : json_object_gbnf();
      given.push_back("response_format");
    } else if (t == "json_schema") {
      const ojson* js = field(*f, "json_schema");
      if (!js || !js->is_object()) bad("response_format", "'response_format.json_schema' must be an object");
      if (const ojson* strict = field(*js, "strict"); strict && !strict->is_boolean()) {
        bad("response_format", "'response_format.json_schema.strict' must be a boolean");
      }
      const ojson* schema = field(*js, "schema");  // the grammar is always strict; no schema: any JSON
      gbnf = schema ? json_schema_to_gbnf(*schema, "response_format.json_schema.schema") : json_object_gbnf();
      given.push_back("response_format");
    } else if (t != "text") {
      bad("response_format", "'response_format.type' must be 'text', 'json_object' or 'json_schema', got " + type->dump());
    }
  }
  if (given.size() > 1) {
    bad(given[1], "give one of 'grammar', 'json_schema' and 'response_format', not both '" + given[0] + "' and '" + given[1] + "'");
  }
  param = given.empty() ? "" : given[0];
  return gbnf;
}

}  // namespace qmm::serve
