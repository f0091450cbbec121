// Tool calling of qmm serve: the output formats parsed back into calls (and what is not a
// call left as content), streamed at every split point the same as whole; end to end on
// stories260K with the published Qwen 2.5 (Hermes), Llama 3.1 and Mistral templates, where
// tool_choice required / named forces the call by a grammar; tool messages in the history;
// and hostile tool definitions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "llm/model.h"
#include "qmm/server/engine_backend.h"
#include "qmm/server/tool_calls.h"
#include "server_test_util.h"
#include "text/tokenizer.h"
#include "../llm/test_models.h"

namespace qmm::serve {
namespace {

using nlohmann::json;
using test::request;

const char* kWeather = R"([{"type":"function","function":{"name":"get_weather","description":"The weather in a city",
  "parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":20},"unit":{"enum":["C","F"]}},
  "required":["city","unit"]}}},
  {"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"a":{"type":"integer"},
  "b":{"type":"integer"}},"required":["a","b"]}}}])";

Request with_tools(const std::string& extra = {}) {
  return parse_request(R"({"messages":[{"role":"user","content":"hi"}],"tools":)" + std::string(kWeather) + extra + "}",
                       Endpoint::chat);
}

TEST(ServeTools, OutputFormatsParseIntoCalls) {
  const Request r = with_tools();
  const std::vector<std::pair<std::string, std::string>> calls = {  // text, the content left
      {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"unit\": \"C\"}}\n</tool_call>", ""},
      {"Let me look.\n<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>", "Let me look."},
      {"<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}", ""},
      {"{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}", ""},
      {"[TOOL_CALLS][{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}]", ""},
      {"[{\"name\": \"add\", \"arguments\": \"{\\\"a\\\": 1, \\\"b\\\": 2}\"}]", ""},
      {"```json\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n```", ""},
  };
  for (const auto& [text, left] : calls) {
    std::string content;
    const std::vector<ToolCall> c = parse_tool_calls(text, r, content);
    ASSERT_EQ(c.size(), 1u) << text;
    EXPECT_EQ(content, left) << text;
    EXPECT_EQ(c[0].id.size(), 9u);  // Mistral's template wants nine letters and digits back
    EXPECT_TRUE(json::parse(c[0].arguments).is_object());
  }
  // Two Hermes calls; then what is not a call of these tools stays content.
  std::string content;
  EXPECT_EQ(parse_tool_calls("<tool_call>{\"name\":\"add\",\"arguments\":{}}</tool_call><tool_call>{\"name\":\"get_weather\","
                             "\"arguments\":{}}</tool_call>", r, content).size(), 2u);
  for (const std::string& text : std::vector<std::string>{"Once upon a time", "{\"name\": \"rm_rf\", \"arguments\": {}}", "{\"name\": \"add\", \"arguments\": 5}",
                                 "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1</tool_call>", "[]", "{not json",
                                 "<tool_call>{\"name\": \"add\"} trailing"}) {
    EXPECT_TRUE(parse_tool_calls(text, r, content).empty()) << text;
    EXPECT_EQ(content, text);
  }
  // tool_choice none: nothing is parsed.
  EXPECT_TRUE(parse_tool_calls(calls[3].first, with_tools(R"(,"tool_choice":"none")"), content).empty());
}

TEST(ServeTools, StreamingHoldsBackOnlyWhatMayBeACall) {
  const Request r = with_tools();
  for (const std::string& text : {std::string("Sure.\n<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>"),
                                 std::string("  {\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}"),
                                 std::string("Once upon a <tool time, a <b> cat"), std::string("[not a call]")}) {
    std::string whole_content;
    const size_t whole = parse_tool_calls(text, r, whole_content).size();
    for (size_t cut = 0; cut <= text.size(); ++cut) {
      ToolCallStream s(r);
      std::string streamed = s.push(text.substr(0, cut));
      streamed += s.push(text.substr(cut));
      std::string held;
      const std::vector<ToolCall> calls = s.finish(held);
      EXPECT_EQ(calls.size(), whole) << text << " cut at " << cut;
      if (whole == 0) {
        EXPECT_EQ(streamed + held, text) << cut;
      }
    }
  }
  ToolCallStream plain(r);
  EXPECT_EQ(plain.push("Once upon"), "Once upon");  // plain text is not held back
}

TEST(ServeTools, BadToolsAre400s) {
  auto param_of = [](const std::string& body) {
    try {
      parse_request(body, Endpoint::chat);
    } catch (const ApiError& e) {
      return std::string(e.param) + ": " + e.what();
    }
    return std::string("accepted");
  };
  const std::string m = R"({"messages":[{"role":"user","content":"hi"}],)";
  EXPECT_EQ(param_of(m + R"("tools":{}})").substr(0, 7), "tools: ");
  EXPECT_EQ(param_of(m + R"("tools":[{"type":"function","function":{"name":"a b"}}]})").substr(0, 10), "tools[0]: ");
  EXPECT_NE(param_of(m + R"("tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]})")
                .find("given twice"), std::string::npos);
  EXPECT_NE(param_of(m + R"("tools":)" + kWeather + R"(,"tool_choice":{"type":"function","function":{"name":"nope"}}})")
                .find("not in 'tools'"), std::string::npos);
  EXPECT_NE(param_of(m + R"("tool_choice":"required"})").find("needs 'tools'"), std::string::npos);
  EXPECT_NE(param_of(m + R"("tools":)" + kWeather + R"(,"tool_choice":"required","grammar":"root ::= [a]"})").find("cannot be combined"),
            std::string::npos);
  EXPECT_NE(param_of(m + R"("tools":)" + kWeather + R"(,"tool_choice":"sometimes"})").find("must be 'none'"), std::string::npos);
  EXPECT_NE(param_of(R"({"messages":[{"role":"user","content":"hi","tool_calls":[]}]})").find("for assistant messages"),
            std::string::npos);
  EXPECT_NE(param_of(R"({"messages":[{"role":"assistant","tool_calls":[{"function":{"name":5}}]}]})").find("entries must be"),
            std::string::npos);
  std::string deep = "{}";
  for (int i = 0; i < 100; ++i) deep = std::string("{\"a\":").append(deep).append("}");
  EXPECT_NE(param_of(m + R"("tools":[{"type":"function","function":{"name":"f","parameters":)" + deep + "}}]}").find("deeper"),
            std::string::npos);
  EXPECT_THROW(parse_request(R"({"prompt":"x","tools":)" + std::string(kWeather) + "}", Endpoint::completion), ApiError);
}

// The published templates (../shared/templates), for the formats that need a real one.
std::optional<std::string> published(const std::string& name) {
  const std::string path = std::string(QMM_MODELS_DIR) + "/../templates/" + name;
  if (!std::filesystem::exists(path)) return std::nullopt;
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// One slot of 2048 positions with the chat template `tmpl`.
struct Served : test::ServedStories {
  explicit Served(const std::string& tmpl) : ServedStories({1, 2048, 64, 4}, tmpl) {}
};

// stories260K never calls a tool by itself: tool_choice required / named makes it, in the
// template's format, and the call comes back parsed, with arguments that fit the schema.
TEST(ServeTools, ForcedCallsThroughPublishedTemplates) {
  QMM_REQUIRE_STORIES260K();
  for (const char* name : {"qwen2.5.jinja", "llama3.jinja", "mistral-v3.jinja", "gemma3.jinja"}) {
    const std::optional<std::string> tmpl = published(name);
    if (!tmpl) GTEST_SKIP() << "../shared/templates/" << name << " is absent";
    Served s(*tmpl);
    for (const char* choice : {R"("required")", R"({"type":"function","function":{"name":"add"}})"}) {
      json body = json::parse(R"({"messages":[{"role":"user","content":"Add 2 and 3."}],"max_tokens":120,"temperature":0.8,
                                  "seed":4,"tool_choice":)" + std::string(choice) + "}");
      body["tools"] = json::parse(kWeather);
      const test::Reply r = request(s.port(), "POST", "/v1/chat/completions", body.dump());
      ASSERT_EQ(r.status, 200) << name << ": " << r.body;
      const json reply = r.json();
      const json& c = reply["choices"][0];
      ASSERT_EQ(c["finish_reason"], "tool_calls") << name << ": " << r.body;
      ASSERT_EQ(c["message"]["tool_calls"].size(), 1u);
      const json& call = c["message"]["tool_calls"][0];
      EXPECT_EQ(call["type"], "function");
      const json args = json::parse(call["function"]["arguments"].get<std::string>());
      if (call["function"]["name"] == "add") {
        EXPECT_TRUE(args["a"].is_number_integer() && args["b"].is_number_integer()) << args;
      } else {
        EXPECT_EQ(call["function"]["name"], "get_weather");
        EXPECT_TRUE(args["unit"] == "C" || args["unit"] == "F") << args;
      }
      if (std::string(choice).find("add") != std::string::npos) {
        EXPECT_EQ(call["function"]["name"], "add");
      }
      EXPECT_TRUE(c["message"]["content"].is_null());
      // Streamed: one delta.tool_calls with the same call, finish_reason tool_calls.
      body["stream"] = true;
      const test::Stream st = test::stream(s.port(), "/v1/chat/completions", body.dump());
      ASSERT_EQ(st.status, 200);
      json streamed_call, finish;
      for (const std::string& e : st.events) {
        const json j = json::parse(e, nullptr, false);
        if (!j.is_object() || j["choices"].empty()) continue;
        if (j["choices"][0]["delta"].contains("tool_calls")) streamed_call = j["choices"][0]["delta"]["tool_calls"][0];
        if (!j["choices"][0]["finish_reason"].is_null()) finish = j["choices"][0]["finish_reason"];
      }
      EXPECT_EQ(finish, "tool_calls") << name;
      EXPECT_EQ(streamed_call["index"], 0);
      EXPECT_EQ(streamed_call["function"]["name"], call["function"]["name"]);
      EXPECT_EQ(streamed_call["function"]["arguments"], call["function"]["arguments"]);  // same seed, same call
    }
    // The conversation goes on with the call and its result in the history.
    json next = json::parse(R"({"messages":[{"role":"user","content":"Add 2 and 3."},
      {"role":"assistant","content":null,"tool_calls":[{"id":"abc123XYZ","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}}]},
      {"role":"tool","tool_call_id":"abc123XYZ","name":"add","content":"5"}],"max_tokens":8,"temperature":0})");
    next["tools"] = json::parse(kWeather);
    const test::Reply r = request(s.port(), "POST", "/v1/chat/completions", next.dump());
    // Gemma's template knows no tool role: its error is a 400 naming the template, not a crash.
    EXPECT_TRUE(r.status == 200 || (r.status == 400 && std::string(name) == "gemma3.jinja")) << name << ": " << r.body;
  }
}

TEST(ServeTools, HostileToolDefinitions) {
  QMM_REQUIRE_STORIES260K();
  Served s("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{{ tools | tojson }}assistant:");
  // A megabyte of tool description: over the body limit, a 413.
  json big = json::parse(R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":2})");
  big["tools"] = json::array({{{"type", "function"}, {"function", {{"name", "f"}, {"description", std::string(1 << 20, 'x')}}}}});
  EXPECT_EQ(request(s.port(), "POST", "/v1/chat/completions", big.dump()).status, 413);
  // A forced call whose parameters use what no grammar can enforce: a 400 naming tools.
  json forced = json::parse(R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"tool_choice":"required",
    "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"s":{"type":"string","pattern":"a+"}}}}}]})");
  const test::Reply r = request(s.port(), "POST", "/v1/chat/completions", forced.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json()["error"]["param"], "tools");
  // The same tool with tool_choice auto needs no grammar: the model answers in plain text.
  forced["tool_choice"] = "auto";
  const test::Reply a = request(s.port(), "POST", "/v1/chat/completions", forced.dump());
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.json()["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(a.json()["choices"][0]["message"].contains("tool_calls"));
}

}  // namespace
}  // namespace qmm::serve
