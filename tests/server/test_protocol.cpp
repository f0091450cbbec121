// The OpenAI wire format of qmm serve: request validation (every bad field is a 400 naming
// it), response and chunk JSON, SSE framing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "qmm/server/protocol.h"

namespace qmm::serve {
namespace {

using nlohmann::json;

Request chat(const std::string& body) { return parse_request(body, Endpoint::chat); }

// The status and param of the ApiError that parsing `body` throws.
std::pair<int, std::string> rejection(const std::string& body, Endpoint ep = Endpoint::chat) {
  try {
    parse_request(body, ep);
  } catch (const ApiError& e) {
    return {e.status, e.param};
  }
  return {0, "accepted"};
}

const std::string kHi = R"("messages":[{"role":"user","content":"hi"}])";

TEST(ServeProtocol, ParsesAChatRequest) {
  const Request r = chat(R"({"model":"m","messages":[{"role":"system","content":"be brief"},
      {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
      {"role":"assistant","content":null},{"role":"developer","content":"x"}],
      "max_tokens":7,"temperature":0,"top_p":0.5,"top_k":3,"min_p":0.1,"seed":42,"stop":["\n","END"],
      "stream":true,"stream_options":{"include_usage":true},"unknown_field":{"ignored":1}})");
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "ab");
  EXPECT_EQ(r.messages[2].content, "");
  EXPECT_EQ(r.messages[3].role, "system");
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.max_tokens, 7u);
  EXPECT_EQ(r.temperature, 0.0f);
  EXPECT_EQ(r.top_p, 0.5f);
  EXPECT_EQ(r.top_k, 3);
  EXPECT_FLOAT_EQ(r.min_p, 0.1f);
  EXPECT_EQ(r.seed, 42u);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
}

TEST(ServeProtocol, Defaults) {
  const Request r = chat("{" + kHi + "}");
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_EQ(r.temperature, 1.0f);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.seed.has_value());
  EXPECT_TRUE(r.stop.empty());
  EXPECT_EQ(chat("{" + kHi + R"(,"max_completion_tokens":5,"max_tokens":9})").max_tokens, 5u);
  EXPECT_EQ(chat("{" + kHi + R"(,"stop":"x","seed":-1})").stop, std::vector<std::string>{"x"});
}

TEST(ServeProtocol, ParsesACompletionRequest) {
  EXPECT_EQ(parse_request(R"({"prompt":"Once"})", Endpoint::completion).prompt, "Once");
  EXPECT_EQ(parse_request(R"({"prompt":["Once"]})", Endpoint::completion).prompt, "Once");
  EXPECT_EQ(rejection(R"({"prompt":5})", Endpoint::completion), std::make_pair(400, std::string("prompt")));
  EXPECT_EQ(rejection(R"({})", Endpoint::completion), std::make_pair(400, std::string("prompt")));
}

TEST(ServeProtocol, RejectsMalformedBodies) {
  for (const char* body : {"", "{", "not json", "[1,2]", "\"s\"", "{\"messages\":[}", "\xff\xfe"}) {
    EXPECT_EQ(rejection(body).first, 400) << body;
  }
  // Deep nesting is an error, not a stack overflow.
  EXPECT_EQ(rejection(std::string(100000, '[')).first, 400);
}

TEST(ServeProtocol, RejectsBadFieldsNamingThem) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "messages"},
      {R"({"messages":"hi"})", "messages"},
      {R"({"messages":[]})", "messages"},
      {R"({"messages":[5]})", "messages[0]"},
      {R"({"messages":[{"content":"x"}]})", "messages[0].role"},
      {R"({"messages":[{"role":"wizard","content":"x"}]})", "messages[0].role"},
      {R"({"messages":[{"role":"user"}]})", "messages[0].content"},
      {R"({"messages":[{"role":"user","content":7}]})", "messages[0].content"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", "messages[0].content"},
  };
  for (const auto& [body, param] : cases) EXPECT_EQ(rejection(body), std::make_pair(400, std::string(param))) << body;
  const std::pair<const char*, const char*> fields[] = {
      {R"("max_tokens":-1)", "max_tokens"},         {R"("max_tokens":-3)", "max_tokens"},
      {R"("max_tokens":2.5)", "max_tokens"},        {R"("max_tokens":"9")", "max_tokens"},
      {R"("max_completion_tokens":-1)", "max_completion_tokens"}, {R"("n_predict":-2)", "n_predict"},
      {R"("frequency_penalty":2.5)", "frequency_penalty"}, {R"("presence_penalty":"x")", "presence_penalty"},
      {R"("repeat_penalty":0)", "repeat_penalty"},  {R"("repeat_last_n":-2)", "repeat_last_n"},
      {R"("temperature":-0.1)", "temperature"},     {R"("temperature":2.5)", "temperature"},
      {R"("temperature":"hot")", "temperature"},    {R"("temperature":true)", "temperature"},
      {R"("top_p":1.5)", "top_p"},                  {R"("top_k":-1)", "top_k"},
      {R"("min_p":2)", "min_p"},                    {R"("seed":1.5)", "seed"},
      {R"("stop":5)", "stop"},                      {R"("stop":[1])", "stop"},
      {R"("stop":"")", "stop"},                     {R"("stop":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"])", "stop"},
      {R"("stream":"yes")", "stream"},              {R"("stream_options":[])", "stream_options"},
      {R"("n":2)", "n"},                            {R"("model":5)", "model"},
  };
  for (const auto& [field, param] : fields) {
    const std::string body = "{" + kHi + "," + field + "}";
    EXPECT_EQ(rejection(body), std::make_pair(400, std::string(param))) << body;
  }
}

// A field qmm does not implement is a 400 naming it, unless its value changes nothing.
TEST(ServeProtocol, RefusesUnimplementedFieldsNamingThem) {
  const std::pair<const char*, const char*> refused[] = {
      {R"("tools":[{"type":"function","function":{"name":"f"}}])", "tools"},
      {R"("tool_choice":"required")", "tool_choice"},
      {R"("response_format":{"type":"json_object"})", "response_format"},
      {R"("post_sampling_probs":true)", "post_sampling_probs"},
      {R"("logit_bias":{"50256":-100})", "logit_bias"}, {R"("grammar":"root ::= [a-z]")", "grammar"},
      {R"("echo":true)", "echo"},
      {R"("suffix":"end")", "suffix"},              {R"("best_of":3)", "best_of"},
      {R"("json_schema":{"type":"object"})", "json_schema"}, {R"("mirostat":2)", "mirostat"},
      {R"("typical_p":0.5)", "typical_p"},          {R"("reasoning_effort":"low")", "reasoning_effort"},
  };
  for (const auto& [field, param] : refused) {
    const std::string body = "{" + kHi + "," + field + "}";
    EXPECT_EQ(rejection(body), std::make_pair(400, std::string(param))) << body;
    const std::string completion = std::string(R"({"prompt":"a",)") + field + "}";
    EXPECT_EQ(rejection(completion, Endpoint::completion), std::make_pair(400, std::string(param))) << completion;
  }
  const Request r = chat("{" + kHi + R"(,"tools":[],"tool_choice":"none","logprobs":false,"top_logprobs":0,"logit_bias":{},
      "response_format":{"type":"text"},"echo":false,"suffix":null,"n_probs":0,"frequency_penalty":0.5,
      "presence_penalty":-0.25,"repeat_penalty":1.1,"repeat_last_n":-1,"cache_prompt":true,"samplers":"edkypmxt"})");
  EXPECT_EQ(rejection("{" + kHi + R"(,"samplers":["temperature","top_k"]})"), std::make_pair(400, std::string("samplers")));
  EXPECT_EQ(r.frequency_penalty, 0.5f);
  EXPECT_EQ(r.presence_penalty, -0.25f);
  EXPECT_FLOAT_EQ(r.repeat_penalty, 1.1f);
  EXPECT_EQ(r.repeat_last_n, size_t{1} << 30);
}

// Token-id prompts, batches of prompts and max_tokens 0 (the usage of a prompt only), as
// llama-server and OpenAI.
TEST(ServeProtocol, TokenIdPromptsAndZeroMaxTokens) {
  const Request ids = parse_request(R"({"prompt":[1,2,3],"max_tokens":0})", Endpoint::completion);
  EXPECT_EQ(ids.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(ids.max_tokens, 0u);
  EXPECT_EQ(parse_request(R"({"prompt":[[7,8]]})", Endpoint::completion).prompt_ids, (std::vector<int32_t>{7, 8}));
  EXPECT_FALSE(parse_request(R"({"prompt":"a","n_predict":-1})", Endpoint::completion).max_tokens.has_value());
  EXPECT_EQ(parse_request(R"({"prompt":"a","n_predict":5})", Endpoint::completion).max_tokens, 5u);
  const Request batch = parse_request(R"({"prompt":["a",[5,6],"c"]})", Endpoint::completion);
  EXPECT_EQ(batch.prompt, "a");
  ASSERT_EQ(batch.more_prompts.size(), 2u);
  EXPECT_EQ(batch.more_prompts[0].ids, (std::vector<int32_t>{5, 6}));
  const std::vector<Request> parts = split_prompts(batch);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].prompt_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(parts[2].prompt, "c");
  EXPECT_TRUE(parts[2].prompt_ids.empty() && parts[2].more_prompts.empty());
  EXPECT_EQ(rejection(R"({"prompt":["a",5]})", Endpoint::completion), std::make_pair(400, std::string("prompt")));
  EXPECT_EQ(rejection(R"({"prompt":[1,-2]})", Endpoint::completion), std::make_pair(400, std::string("prompt")));
  EXPECT_EQ(rejection(R"({"prompt":[1,"a"]})", Endpoint::completion), std::make_pair(400, std::string("prompt")));
  EXPECT_EQ(rejection(R"({"prompt":[]})", Endpoint::completion), std::make_pair(400, std::string("prompt")));
}

TEST(ServeProtocol, ErrorBodyIsOpenAIStyle) {
  const json e = json::parse(error_body(ApiError(400, "bad 'x'", "x")));
  EXPECT_EQ(e["error"]["message"], "bad 'x'");
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_EQ(e["error"]["param"], "x");
  EXPECT_TRUE(e["error"]["code"].is_null());
  EXPECT_EQ(json::parse(error_body(ApiError(401, "k")))["error"]["type"], "authentication_error");
  EXPECT_EQ(json::parse(error_body(ApiError(503, "busy")))["error"]["type"], "unavailable_error");
}

TEST(ServeProtocol, ResponsesAndChunks) {
  const ResponseHead chat_head{Endpoint::chat, "chatcmpl-1", "m", 1700000000};
  const json c = json::parse(completion_body(chat_head, "Hi there", Finish::length, {5, 2}));
  EXPECT_EQ(c["id"], "chatcmpl-1");
  EXPECT_EQ(c["object"], "chat.completion");
  EXPECT_EQ(c["created"], 1700000000);
  EXPECT_EQ(c["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(c["choices"][0]["message"]["content"], "Hi there");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(c["usage"]["total_tokens"], 7);

  EXPECT_EQ(json::parse(role_chunk(chat_head))["choices"][0]["delta"]["role"], "assistant");
  const json t = json::parse(text_chunk(chat_head, "é"));
  EXPECT_EQ(t["object"], "chat.completion.chunk");
  EXPECT_EQ(t["choices"][0]["delta"]["content"], "é");
  EXPECT_TRUE(t["choices"][0]["finish_reason"].is_null());
  const json f = json::parse(finish_chunk(chat_head, Finish::stop));
  EXPECT_EQ(f["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(f["choices"][0]["delta"].empty());
  EXPECT_EQ(json::parse(usage_chunk(chat_head, {3, 4}))["usage"]["completion_tokens"], 4);

  const ResponseHead cmpl{Endpoint::completion, "cmpl-2", "m", 1};
  const json tc = json::parse(text_chunk(cmpl, "abc"));
  EXPECT_EQ(tc["object"], "text_completion");
  EXPECT_EQ(tc["choices"][0]["text"], "abc");
  EXPECT_EQ(json::parse(completion_body(cmpl, "x", Finish::stop, {}))["choices"][0]["text"], "x");

  EXPECT_EQ(json::parse(models_body("stories", 1))["data"][0]["id"], "stories");
  EXPECT_EQ(sse_event("[DONE]"), "data: [DONE]\n\n");
}

}  // namespace
}  // namespace qmm::serve
