// The wire format of qmm serve's application fields and routes (apps_protocol.h): logprobs
// requests and their two OpenAI shapes, /tokenize, /detokenize and /v1/embeddings bodies. Every
// bad value is a 400 naming the field; huge numbers are refused, not clamped.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "qmm/server/apps_protocol.h"

namespace qmm::serve {
namespace {

using nlohmann::json;

template <class F>
std::pair<int, std::string> rejection(F parse) {
  try {
    parse();
  } catch (const ApiError& e) {
    return {e.status, e.param};
  }
  return {0, "accepted"};
}

const std::string kHi = R"("messages":[{"role":"user","content":"hi"}])";

int chat_logprobs(const std::string& fields) { return parse_request("{" + kHi + "," + fields + "}", Endpoint::chat).logprobs; }
int completion_logprobs(const std::string& fields) {
  return parse_request(R"({"prompt":"a",)" + fields + "}", Endpoint::completion).logprobs;
}

TEST(ServeAppsProtocol, LogprobsFieldsOfBothEndpoints) {
  EXPECT_EQ(parse_request("{" + kHi + "}", Endpoint::chat).logprobs, -1);
  EXPECT_EQ(chat_logprobs(R"("logprobs":false,"top_logprobs":0)"), -1);
  EXPECT_EQ(chat_logprobs(R"("logprobs":true)"), 0);
  EXPECT_EQ(chat_logprobs(R"("logprobs":true,"top_logprobs":20)"), 20);
  EXPECT_EQ(chat_logprobs(R"("n_probs":7)"), 7);  // llama-server's: on, with 7 alternatives
  EXPECT_EQ(chat_logprobs(R"("logprobs":true,"top_logprobs":2,"n_probs":5)"), 5);
  EXPECT_EQ(completion_logprobs(R"("logprobs":3)"), 3);
  EXPECT_EQ(completion_logprobs(R"("logprobs":0)"), 0);
  EXPECT_EQ(completion_logprobs(R"("logprobs":false)"), -1);
  EXPECT_EQ(completion_logprobs(R"("n_probs":100)"), 100);
  const std::pair<const char*, const char*> bad_chat[] = {
      {R"("logprobs":1)", "logprobs"},
      {R"("logprobs":"yes")", "logprobs"},
      {R"("top_logprobs":3)", "top_logprobs"},  // without logprobs: true
      {R"("logprobs":true,"top_logprobs":21)", "top_logprobs"},
      {R"("logprobs":true,"top_logprobs":-1)", "top_logprobs"},
      {R"("logprobs":true,"top_logprobs":2.5)", "top_logprobs"},
      {R"("logprobs":true,"top_logprobs":"3")", "top_logprobs"},
      {R"("logprobs":true,"top_logprobs":18446744073709551615)", "top_logprobs"},
      {R"("logprobs":true,"top_logprobs":1e300)", "top_logprobs"},
      {R"("n_probs":101)", "n_probs"},
      {R"("n_probs":-1)", "n_probs"},
      {R"("n_probs":9223372036854775807)", "n_probs"},
      {R"("n_probs":1e30)", "n_probs"},
      {R"("post_sampling_probs":true)", "post_sampling_probs"},
  };
  for (const auto& [fields, param] : bad_chat) {
    EXPECT_EQ(rejection([&] { chat_logprobs(fields); }), std::make_pair(400, std::string(param))) << fields;
  }
  const std::pair<const char*, const char*> bad_completion[] = {
      {R"("logprobs":true)", "logprobs"},  {R"("logprobs":21)", "logprobs"},   {R"("logprobs":-1)", "logprobs"},
      {R"("logprobs":"2")", "logprobs"},   {R"("top_logprobs":2)", "top_logprobs"},
      {R"("n_probs":4294967296)", "n_probs"},
  };
  for (const auto& [fields, param] : bad_completion) {
    EXPECT_EQ(rejection([&] { completion_logprobs(fields); }), std::make_pair(400, std::string(param))) << fields;
  }
}

std::vector<TokenLogprob> sample_logprobs() {
  auto alt = [](const char* token, float lp) {
    TokenAlt t;
    t.token = token;
    t.logprob = lp;
    return t;
  };
  std::vector<TokenLogprob> out(2);
  out[0].chosen = alt(" The", -0.5f);
  out[0].top = {alt(" The", -0.5f), alt(" A", -1.5f)};
  out[1].chosen = alt("\xe2\x96", -std::numeric_limits<float>::infinity());  // half a character
  out[1].top = {alt("x", -0.1f), alt("x", -0.2f)};
  out[1].offset = 4;
  return out;
}

TEST(ServeAppsProtocol, LogprobsJsonInOpenAIShapes) {
  const json chat = json::parse(logprobs_json(Endpoint::chat, sample_logprobs()).dump(-1, ' ', false, json::error_handler_t::replace));
  ASSERT_EQ(chat["content"].size(), 2u);
  EXPECT_EQ(chat["content"][0]["token"], " The");
  EXPECT_FLOAT_EQ(chat["content"][0]["logprob"].get<float>(), -0.5f);
  EXPECT_EQ(chat["content"][0]["bytes"], json::parse("[32,84,104,101]"));
  EXPECT_EQ(chat["content"][0]["top_logprobs"][1]["token"], " A");
  EXPECT_EQ(chat["content"][0]["top_logprobs"][1]["bytes"], json::parse("[32,65]"));
  EXPECT_EQ(chat["content"][1]["bytes"], json::parse("[226,150]"));  // the exact bytes, though not UTF-8
  EXPECT_TRUE(chat["content"][1]["logprob"].is_number());  // -inf is not JSON: the lowest float instead
  EXPECT_LT(chat["content"][1]["logprob"].get<double>(), -1e38);
  EXPECT_TRUE(chat["refusal"].is_null());
  const json legacy = json::parse(logprobs_json(Endpoint::completion, sample_logprobs()).dump(-1, ' ', false, json::error_handler_t::replace));
  EXPECT_EQ(legacy["tokens"][0], " The");
  EXPECT_FLOAT_EQ(legacy["token_logprobs"][0].get<float>(), -0.5f);
  EXPECT_EQ(legacy["top_logprobs"][0].size(), 2u);
  EXPECT_EQ(legacy["top_logprobs"][1].size(), 1u);  // two alternatives that print alike: the first
  EXPECT_FLOAT_EQ(legacy["top_logprobs"][1]["x"].get<float>(), -0.1f);
  EXPECT_EQ(legacy["text_offset"], json::parse("[0,4]"));
}

TEST(ServeAppsProtocol, ChunksAndBodiesCarryLogprobsOnlyWhenAsked) {
  const ResponseHead h{Endpoint::chat, "chatcmpl-1", "m", 1};
  const std::vector<TokenLogprob> lp = sample_logprobs();
  json c = json::parse(text_chunk(h, " The", 0, &lp));
  EXPECT_EQ(c["choices"][0]["logprobs"]["content"].size(), 2u);
  EXPECT_TRUE(json::parse(text_chunk(h, " The"))["choices"][0]["logprobs"].is_null());
  json body = json::parse(completion_body(h, {Choice{"x", Finish::stop, lp}, Choice{"y", Finish::length, std::nullopt}}, {}));
  EXPECT_EQ(body["choices"][0]["logprobs"]["content"][0]["token"], " The");
  EXPECT_TRUE(body["choices"][1]["logprobs"].is_null());
}

TEST(ServeAppsProtocol, TokenizeAndDetokenizeBodies) {
  TokenizeRequest t = parse_tokenize(R"({"content":"Hello","add_special":true,"with_pieces":true,"parse_special":true})");
  EXPECT_EQ(t.content, "Hello");
  EXPECT_TRUE(t.add_special);
  EXPECT_TRUE(t.with_pieces);
  t = parse_tokenize(R"({"content":""})");
  EXPECT_FALSE(t.add_special);  // llama-server's default
  const std::pair<const char*, const char*> bad[] = {
      {"", ""}, {"[1]", ""}, {"{}", "content"}, {R"({"content":5})", "content"},
      {R"({"content":"a","add_special":"yes"})", "add_special"}, {R"({"content":"a","with_pieces":1})", "with_pieces"},
      {R"({"content":"a","parse_special":false})", "parse_special"},
  };
  for (const auto& [body, param] : bad) {
    EXPECT_EQ(rejection([&] { parse_tokenize(body); }), std::make_pair(400, std::string(param))) << body;
  }
  EXPECT_EQ(tokenize_body({1, 2}, nullptr), R"({"tokens":[1,2]})");
  const std::vector<std::string> pieces{" a", "\xe2\x96"};
  EXPECT_EQ(tokenize_body({7, 8}, &pieces), R"({"tokens":[{"id":7,"piece":" a"},{"id":8,"piece":[226,150]}]})");

  EXPECT_EQ(parse_detokenize(R"({"tokens":[1,2,3]})"), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(parse_detokenize(R"({"tokens":[]})").empty());
  for (const char* body : {"{}", R"({"tokens":"1 2"})", R"({"tokens":[1,"a"]})", R"({"tokens":[-1]})",
                           R"({"tokens":[1099511627776]})", R"({"tokens":[1.5]})", R"({"tokens":[[1]]})"}) {
    EXPECT_EQ(rejection([&] { parse_detokenize(body); }), std::make_pair(400, std::string("tokens"))) << body;
  }
  EXPECT_EQ(detokenize_body("a\"<b>"), R"({"content":"a\"<b>"})");
}

TEST(ServeAppsProtocol, EmbeddingRequests) {
  EmbeddingRequest e = parse_embeddings(R"({"input":"hello","model":"m"})");
  EXPECT_EQ(e.inputs.endpoint, Endpoint::embedding);
  EXPECT_EQ(e.inputs.prompt, "hello");
  EXPECT_EQ(e.inputs.model, "m");
  EXPECT_FALSE(e.base64);
  e = parse_embeddings(R"({"input":["a",[1,2],"b"],"encoding_format":"base64","dimensions":8,"user":"u"})");
  EXPECT_EQ(e.inputs.prompt, "a");
  ASSERT_EQ(e.inputs.more_prompts.size(), 2u);
  EXPECT_EQ(e.inputs.more_prompts[0].ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(e.inputs.more_prompts[1].text, "b");
  EXPECT_TRUE(e.base64);
  EXPECT_EQ(e.dimensions, 8);
  e = parse_embeddings(R"({"input":[5,6]})");
  EXPECT_EQ(e.inputs.prompt_ids, (std::vector<int32_t>{5, 6}));
  e = parse_embeddings(R"({"content":"llama-server's name"})");
  EXPECT_EQ(e.inputs.prompt, "llama-server's name");
  std::string many = R"({"input":[)";
  for (size_t i = 0; i <= kMaxEmbeddingInputs; ++i) many += std::string(i ? "," : "") + "\"x\"";
  many += "]}";
  const std::pair<std::string, const char*> bad[] = {
      {"{}", "input"}, {R"({"input":5})", "input"}, {R"({"input":[]})", "input"}, {R"({"input":[[]]})", "input"},
      {R"({"input":[1,"a"]})", "input"}, {R"({"input":[-3]})", "input"}, {R"({"input":{"a":1}})", "input"},
      {many, "input"}, {R"({"input":"a","encoding_format":"hex"})", "encoding_format"},
      {R"({"input":"a","dimensions":0})", "dimensions"}, {R"({"input":"a","dimensions":1e99})", "dimensions"},
      {R"({"input":"a","model":3})", "model"}, {R"({"input":"a","embd_normalize":1})", "embd_normalize"},
      {R"({"input":"a","user":[]})", "user"}, {"not json", ""}, {"[]", ""},
  };
  for (const auto& [body, param] : bad) {
    EXPECT_EQ(rejection([&] { parse_embeddings(body); }), std::make_pair(400, std::string(param))) << body;
  }
}

TEST(ServeAppsProtocol, EmbeddingsBodyAndBase64) {
  EXPECT_EQ(base64_floats({1.0f}), "AACAPw==");  // 00 00 80 3f
  EXPECT_EQ(base64_floats({1.0f, 2.0f}), "AACAPwAAAEA=");
  EXPECT_EQ(base64_floats({1.0f, 2.0f, -0.0f}), "AACAPwAAAEAAAACA");
  EXPECT_EQ(base64_floats({}), "");
  const json j = json::parse(embeddings_body("m", {{0.6f, 0.8f}, {1.0f, 0.0f}}, false, 7));
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["model"], "m");
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["data"][1]["index"], 1);
  EXPECT_EQ(j["data"][1]["object"], "embedding");
  EXPECT_FLOAT_EQ(j["data"][0]["embedding"][1].get<float>(), 0.8f);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 7);
  EXPECT_EQ(j["usage"]["total_tokens"], 7);
  EXPECT_EQ(json::parse(embeddings_body("m", {{1.0f}}, true, 1))["data"][0]["embedding"], "AACAPw==");
}

}  // namespace
}  // namespace qmm::serve
