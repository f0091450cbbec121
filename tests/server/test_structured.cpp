// Structured output of qmm serve on stories260K (a model that only tells stories, so every
// JSON it writes is the grammar's doing): response_format json_object / json_schema,
// llama-server's json_schema and grammar. Sampled outputs parse, and validate against their
// schema with Debian's python3-jsonschema (the test skips, saying so, where it is missing).
// Bad and hostile schemas and grammars are 400s naming the field.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "llm/model.h"
#include "qmm/server/engine_backend.h"
#include "server_test_util.h"
#include "text/tokenizer.h"
#include "../llm/test_models.h"

namespace qmm::serve {
namespace {

using nlohmann::json;
using test::request;

// Two slots of 1024 positions, the plain chat template.
struct Served : test::ServedStories {
  Served() : ServedStories({2, 1024, 64, 8}) {}
};

class Structured : public ::testing::Test {
 protected:
  void SetUp() override { QMM_REQUIRE_STORIES260K(); }
};

json chat(json extra, uint64_t seed) {
  json j{{"messages", {{{"role", "user"}, {"content", "Tell me about a dog."}}}},
         {"max_tokens", 400},
         {"temperature", 1.0},
         {"seed", seed}};
  j.update(extra);
  return j;
}

// Runs python3-jsonschema over [schema, instance] pairs: "" if all validate, else its report;
// nullopt where python3 or jsonschema is missing.
std::optional<std::string> validate_all(const json& pairs) {
  if (std::system("python3 -c 'import jsonschema' >/dev/null 2>&1") != 0) return std::nullopt;
  const std::string in = ::testing::TempDir() + "qmm_schema_pairs.json";
  std::ofstream(in) << pairs.dump();
  const std::string cmd =
      "python3 -c 'import json,sys,jsonschema\n"
      "bad=0\n"
      "for s,x in json.load(open(sys.argv[1])):\n"
      "  try: jsonschema.validate(x, s)\n"
      "  except jsonschema.ValidationError as e: print(\"INVALID\", json.dumps(x), e.message); bad+=1\n"
      "sys.exit(1 if bad else 0)' " + in + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int rc = pclose(p);
  return rc == 0 ? std::string() : "validator: " + out;
}

const json kSchemas = json::parse(R"([
  {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"},
   "kind": {"enum": ["dog", "cat", 3, null]}}, "required": ["name", "kind"]},
  {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 4},
  {"anyOf": [{"type": "boolean"}, {"type": "object", "properties": {"ok": {"const": true}}, "required": ["ok"]}]},
  {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
     "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}}, "required": ["v"]}},
   "$ref": "#/$defs/node"},
  {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}, "id": {"type": "string", "format": "uuid"},
   "tags": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 5}, "maxItems": 3},
   "x": {"type": ["integer", "null"]}}, "required": ["when", "id"], "additionalProperties": false},
  {"type": "object", "properties": {"a": {"type": "string", "maxLength": 4}}, "additionalProperties": {"type": "integer"}},
  {"type": "object", "properties": {"p": {"type": "array", "prefixItems": [{"type": "string", "maxLength": 3}, {"type": "boolean"}], "items": false}},
   "required": ["p"]}
])");

TEST_F(Structured, JsonSchemaOutputsParseAndValidate) {
  Served s;
  json pairs = json::array();
  size_t stopped = 0, total = 0;
  for (size_t i = 0; i < kSchemas.size(); ++i) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      // OpenAI's response_format, and llama-server's json_schema, alternately.
      json extra = json::object();
      if (seed % 2) {
        extra["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", "t"}, {"schema", kSchemas[i]}, {"strict", true}}}};
      } else {
        extra["json_schema"] = kSchemas[i];
      }
      const test::Reply r = request(s.port(), "POST", "/v1/chat/completions", chat(extra, seed).dump());
      ASSERT_EQ(r.status, 200) << r.body;
      const json reply = r.json();
      const json& choice = reply["choices"][0];
      ++total;
      if (choice["finish_reason"] != "stop") continue;  // cut by max_tokens: not finished
      ++stopped;
      const std::string text = choice["message"]["content"];
      const json value = json::parse(text, nullptr, false);
      ASSERT_FALSE(value.is_discarded()) << "schema " << i << " seed " << seed << ": " << text;
      pairs.push_back({kSchemas[i], value});
    }
  }
  EXPECT_GE(stopped * 10, total * 8) << stopped << " of " << total << " finished";
  const std::optional<std::string> report = validate_all(pairs);
  if (!report) GTEST_SKIP() << "python3-jsonschema is not installed (apt-get install python3-jsonschema): outputs parsed, not validated";
  EXPECT_EQ(*report, "");
}

TEST_F(Structured, JsonObjectGrammarAndStreaming) {
  Served s;
  const test::Reply r = request(s.port(), "POST", "/v1/completions",
                                json{{"prompt", "Once upon a time"}, {"max_tokens", 300}, {"temperature", 0},
                                     {"response_format", {{"type", "json_object"}}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string text = r.json()["choices"][0]["text"];
  if (r.json()["choices"][0]["finish_reason"] == "stop") {
    EXPECT_TRUE(json::parse(text, nullptr, false).is_object()) << text;
  } else {  // greedy stories260K may tell its story inside a string until max_tokens
    EXPECT_EQ(text.substr(0, 1), "{") << text;
  }
  // GBNF as llama-server's `grammar`, streamed: the same text as unstreamed.
  const json g{{"prompt", "Once upon a time"}, {"max_tokens", 50}, {"temperature", 0},
               {"grammar", "root ::= \"yes\" | \"no\" | [0-9]{2,3} \" dogs\""}};
  const test::Reply plain = request(s.port(), "POST", "/v1/completions", g.dump());
  ASSERT_EQ(plain.status, 200) << plain.body;
  const std::string answer = plain.json()["choices"][0]["text"];
  EXPECT_TRUE(answer == "yes" || answer == "no" || answer.find(" dogs") != std::string::npos) << answer;
  EXPECT_EQ(plain.json()["choices"][0]["finish_reason"], "stop");
  json gs = g;
  gs["stream"] = true;
  EXPECT_EQ(test::streamed_text(test::stream(s.port(), "/v1/completions", gs.dump())), answer);
  // The same grammar again is compiled once.
  const size_t compiled = s.backend.grammars_compiled();
  ASSERT_EQ(request(s.port(), "POST", "/v1/completions", g.dump()).status, 200);
  EXPECT_EQ(s.backend.grammars_compiled(), compiled);
}

// Each bad request: the field the 400 names and a piece of its message.
TEST_F(Structured, BadSchemasAndGrammarsAre400s) {
  Served s;
  std::string deep = "{\"type\":\"string\"}";
  for (int i = 0; i < 100; ++i) deep = std::string("{\"type\":\"array\",\"items\":").append(deep).append("}");
  std::string wide = "{\"type\":\"object\",\"properties\":{";  // 0.9 MB of enums: a grammar over 1 MiB
  for (int i = 0; i < 1500; ++i) {
    wide.append(i ? "," : "").append("\"p").append(std::to_string(i)).append("\":{\"enum\":[\"");
    wide.append(600, 'x').append("\"]}");
  }
  wide += "}}";
  std::string ambiguous = "root ::= r0\n";
  for (int i = 0; i < 40; ++i) {
    const std::string a = std::to_string(i), b = std::to_string(i + 1);
    ambiguous.append("r").append(a).append(" ::= r").append(b).append(" | r").append(b).append("\n");
  }
  ambiguous += "r40 ::= \"a\"\n";
  const std::vector<std::tuple<json, std::string, std::string>> cases = {
      {{{"json_schema", {{"type", "string"}, {"pattern", "^a+$"}}}}, "json_schema", "keyword 'pattern' is not supported"},
      {{{"json_schema", {{"$ref", "#"}}}}, "json_schema", "left-recursive"},
      {{{"json_schema", {{"$ref", "#/$defs/missing"}}}}, "json_schema", "not defined"},
      {{{"json_schema", {{"$ref", "http://example.com/s.json"}}}}, "json_schema", "not supported"},
      {{{"json_schema", {{"type", "strin"}}}}, "json_schema", "not a JSON schema type"},
      {{{"json_schema", {{"type", "array"}, {"maxItems", 100000}}}}, "json_schema", "above 1000"},
      {{{"json_schema", {{"type", "object"}, {"required", {"x"}}, {"properties", json::object()}}}}, "json_schema", "not in 'properties'"},
      {{{"json_schema", json::parse(deep)}}, "json_schema", "nested deeper than 64"},
      {{{"json_schema", json::parse(wide)}}, "json_schema", "larger than 1 MiB"},
      {{{"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", {{"type", "string"}, {"format", "email"}}}}}}}},
       "response_format.json_schema.schema", "format \"email\" is not supported"},
      {{{"response_format", {{"type", "xml"}}}}, "response_format", "must be 'text', 'json_object' or 'json_schema'"},
      {{{"grammar", "root ::= root \"a\""}}, "grammar", "left-recursive"},
      {{{"grammar", "root ::= (\"" + std::string(1000, 'a') + "\"){5000}"}}, "grammar", "(parsed)"},
      {{{"grammar", "root ::= \"" + std::string(1000, 'a') + "\"{5000}"}}, "grammar", "more than"},
      {{{"grammar", ambiguous}}, "grammar", "too ambiguous"},
      {{{"grammar", "root ::= [a-"}}, "grammar", "grammar line 1"},
      {{{"grammar", 7}}, "grammar", "must be a string"},
      {{{"grammar", "root ::= \"a\""}, {"json_schema", {{"type", "string"}}}}, "json_schema", "give one of"},
  };
  for (const auto& [extra, param, message] : cases) {
    json body{{"prompt", "x"}, {"max_tokens", 2}};
    body.update(extra);
    const test::Reply r = request(s.port(), "POST", "/v1/completions", body.dump());
    if (message == "(parsed)") {  // a group repeated is references, not copies: it compiles
      EXPECT_EQ(r.status, 200) << r.body;
      continue;
    }
    ASSERT_EQ(r.status, 400) << extra.dump().substr(0, 200) << " -> " << r.body.substr(0, 300);
    EXPECT_EQ(r.json()["error"]["param"], param) << r.body.substr(0, 300);
    EXPECT_NE(r.json()["error"]["message"].get<std::string>().find(message), std::string::npos) << r.body.substr(0, 300);
  }
}

}  // namespace
}  // namespace qmm::serve
