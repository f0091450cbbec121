// qmm serve's application routes and fields end to end on stories260K over HTTP: logprobs
// (streamed and not, both endpoints, the same numbers either way), /tokenize and /detokenize
// against the tokenizer, /v1/embeddings against the generator's pooling (the same vector alone,
// in a batch, as token ids, as base64, beside a running generation), the chat page's headers,
// and hostile bodies for every new route and field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <future>

#include "llm/model.h"
#include "qmm/server/engine_backend.h"
#include "server_test_util.h"
#include "text/tokenizer.h"
#include "../llm/test_models.h"

namespace qmm::serve {
namespace {

using nlohmann::json;
using test::request;

using test::plain_chat_source;
using test::stories;

struct Served {
  EngineBackend backend;
  test::TestServer server;
  explicit Served(const std::string& key = {}, llm::Pooling pooling = llm::Pooling::mean)
      : backend(stories().model, stories().tok, stories().ctx, {2, 128, 16, 4},
                llm::ChatFormat::from_template(stories().tok, plain_chat_source(), "test")),
        server(backend, [&key] {
          ServerOptions o;
          o.model_id = "stories260K";
          o.api_key = key;
          return o;
        }()) {
    backend.set_pooling(pooling);
  }
  int port() const { return server.port(); }
  test::Reply post(const std::string& path, const std::string& body) { return request(port(), "POST", path, body); }
};

class ServeApps : public ::testing::Test {
 protected:
  void SetUp() override { QMM_REQUIRE_STORIES260K(); }
};

// The logprobs entries of a chat answer, streamed (concatenated over the chunks) or not.
json chat_logprobs(const json& body) { return body["choices"][0]["logprobs"]["content"]; }

TEST_F(ServeApps, ChatLogprobsStreamedOrNot) {
  Served s;
  const json req{{"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}}, {"max_tokens", 10},
                 {"temperature", 0}, {"logprobs", true}, {"top_logprobs", 3}};
  const test::Reply r = s.post("/v1/chat/completions", req.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json lp = chat_logprobs(r.json());
  ASSERT_EQ(lp.size(), r.json()["usage"]["completion_tokens"].get<size_t>());
  std::string joined;
  for (const json& t : lp) {
    joined += t["token"].get<std::string>();
    ASSERT_EQ(t["top_logprobs"].size(), 3u);
    EXPECT_EQ(t["top_logprobs"][0]["token"], t["token"]);  // greedy: the best one
    EXPECT_FLOAT_EQ(t["top_logprobs"][0]["logprob"].get<float>(), t["logprob"].get<float>());
    EXPECT_LE(t["logprob"].get<float>(), 0.0f);
    EXPECT_GE(t["top_logprobs"][1]["logprob"].get<float>(), t["top_logprobs"][2]["logprob"].get<float>());
    const std::string tok = t["token"];
    EXPECT_EQ(t["bytes"].size(), tok.size());
  }
  const std::string content = r.json()["choices"][0]["message"]["content"];
  EXPECT_NE(joined.find(content.substr(0, 5)), std::string::npos) << joined << " / " << content;

  json sreq = req;
  sreq["stream"] = true;
  const test::Stream st = test::stream(s.port(), "/v1/chat/completions", sreq.dump());
  ASSERT_EQ(st.status, 200);
  json streamed = json::array();
  for (const std::string& e : st.events) {
    const json j = json::parse(e, nullptr, false);
    if (!j.is_object() || j["choices"].empty() || j["choices"][0]["logprobs"].is_null()) continue;
    for (const json& t : j["choices"][0]["logprobs"]["content"]) streamed.push_back(t);
  }
  EXPECT_EQ(streamed, lp);
  EXPECT_EQ(test::streamed_text(st), content);

  // Without logprobs: null, as before.
  const json plain = s.post("/v1/chat/completions", json{{"messages", req["messages"]}, {"max_tokens", 2}}.dump()).json();
  EXPECT_TRUE(plain["choices"][0]["logprobs"].is_null());
}

TEST_F(ServeApps, CompletionLogprobsLegacyShapeAndNProbs) {
  Served s;
  const json req{{"prompt", "Once upon a time"}, {"max_tokens", 8}, {"temperature", 0}, {"logprobs", 2}};
  const test::Reply r = s.post("/v1/completions", req.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json c = r.json()["choices"][0];
  const json& lp = c["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 8u);
  std::string joined;
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(lp["text_offset"][i], joined.size());
    joined += lp["tokens"][i].get<std::string>();
    EXPECT_EQ(lp["top_logprobs"][i].size(), 2u);
    EXPECT_FLOAT_EQ(lp["top_logprobs"][i][lp["tokens"][i].get<std::string>()].get<float>(), lp["token_logprobs"][i].get<float>());
  }
  EXPECT_EQ(joined, c["text"].get<std::string>());  // the tokens spell the text
  // llama-server's n_probs gives the same numbers; streamed, each chunk has its token's.
  json np = req;
  np.erase("logprobs");
  np["n_probs"] = 2;
  np["stream"] = true;
  const test::Stream st = test::stream(s.port(), "/v1/completions", np.dump());
  json tokens = json::array(), values = json::array();
  for (const std::string& e : st.events) {
    const json j = json::parse(e, nullptr, false);
    if (!j.is_object() || j["choices"].empty() || j["choices"][0]["logprobs"].is_null()) continue;
    for (const json& t : j["choices"][0]["logprobs"]["tokens"]) tokens.push_back(t);
    for (const json& v : j["choices"][0]["logprobs"]["token_logprobs"]) values.push_back(v);
  }
  EXPECT_EQ(tokens, lp["tokens"]);
  EXPECT_EQ(values, lp["token_logprobs"]);
  // The raw distribution: sampling at temperature 1.5 with top-k 1 draws the same tokens, the same log-probs.
  json hot = req;
  hot["temperature"] = 1.5;
  hot["top_k"] = 1;
  EXPECT_EQ(s.post("/v1/completions", hot.dump()).json()["choices"][0]["logprobs"], lp);
}

TEST_F(ServeApps, TokenizeDetokenizeRoundTrip) {
  Served s;
  const llm::Tokenizer& tok = stories().tok;
  const std::string text = "Once upon a time, Lily <s> saw a cat.";
  test::Reply r = s.post("/tokenize", json{{"content", text}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<int32_t> ids = tok.encode(text, false);
  EXPECT_EQ(r.json()["tokens"], json(ids));
  r = s.post("/tokenize", json{{"content", text}, {"add_special", true}, {"with_pieces", true}}.dump());
  const json pieces = r.json()["tokens"];
  ASSERT_EQ(pieces.size(), ids.size() + 1);
  EXPECT_EQ(pieces[0]["id"], tok.bos());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(pieces[i + 1]["id"], ids[i]);
    EXPECT_EQ(pieces[i + 1]["piece"], tok.piece(ids[i]));
  }
  r = s.post("/detokenize", json{{"tokens", ids}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["content"], tok.decode(ids));
  EXPECT_NE(r.json()["content"].get<std::string>().find("Lily"), std::string::npos);
  EXPECT_EQ(s.post("/v1/detokenize", R"({"tokens":[]})").json()["content"], "");
  EXPECT_EQ(s.post("/tokenize", R"({"content":""})").json()["tokens"], json::array());
  // Ids outside the vocabulary are a 400 naming the id.
  for (const std::string bad : {"[512]", "[1, 99999]", "[2147483647]"}) {
    r = s.post("/detokenize", R"({"tokens":)" + bad + "}");
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(r.json()["error"]["param"], "tokens");
    EXPECT_NE(r.json()["error"]["message"].get<std::string>().find("outside the vocabulary"), std::string::npos);
  }
}

std::vector<float> from_base64(const std::string& s) {
  std::string bytes;
  uint32_t w = 0;
  int bits = 0;
  for (char c : s) {
    if (c == '=') break;
    const char* at = std::strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", c);
    w = (w << 6) | static_cast<uint32_t>(at - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes += static_cast<char>((w >> bits) & 0xff);
    }
  }
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);  // (a little-endian test machine)
  return v;
}

TEST_F(ServeApps, EmbeddingsAloneBatchedAsIdsAndBase64) {
  Served s;
  const llm::Tokenizer& tok = stories().tok;
  const size_t dim = stories().model.config().n_embd;
  test::Reply r = s.post("/v1/embeddings", R"({"input":"The cat sat on the mat.","model":"x"})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.json();
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["model"], "x");
  const std::vector<float> one = j["data"][0]["embedding"];
  ASSERT_EQ(one.size(), dim);
  double norm = 0;
  for (float x : one) norm += x * x;
  EXPECT_NEAR(norm, 1.0, 1e-4);
  EXPECT_EQ(j["usage"]["prompt_tokens"], tok.encode("The cat sat on the mat.", true).size());

  // In a batch (beside a running generation), as token ids, and as base64: the same vector.
  auto gen = std::async(std::launch::async, [&] {
    return test::stream(s.port(), "/v1/completions", R"({"prompt":"Once upon a time","max_tokens":60,"stream":true})");
  });
  const json ids = tok.encode("The cat sat on the mat.", true);
  r = s.post("/embeddings", json{{"input", json::array({"A dog.", "The cat sat on the mat.", ids})}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  j = r.json();
  ASSERT_EQ(j["data"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(j["data"][i]["index"], i);
  const std::vector<float> batched = j["data"][1]["embedding"], as_ids = j["data"][2]["embedding"], dog = j["data"][0]["embedding"];
  for (size_t i = 0; i < dim; ++i) {
    EXPECT_NEAR(batched[i], one[i], 1e-5);
    EXPECT_NEAR(as_ids[i], one[i], 1e-5);
  }
  EXPECT_NE(dog, one);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 2 * ids.size() + tok.encode("A dog.", true).size());
  r = s.post("/v1/embeddings", R"({"input":"The cat sat on the mat.","encoding_format":"base64"})");
  EXPECT_EQ(from_base64(r.json()["data"][0]["embedding"]), one);
  EXPECT_EQ(gen.get().status, 200);

  // dimensions: only the model's; an input longer than a slot; ids outside the vocabulary.
  EXPECT_EQ(s.post("/v1/embeddings", json{{"input", "a"}, {"dimensions", dim}}.dump()).status, 200);
  EXPECT_EQ(s.post("/v1/embeddings", json{{"input", "a"}, {"dimensions", dim / 2}}.dump()).json()["error"]["param"], "dimensions");
  std::string lng;
  for (int i = 0; i < 200; ++i) lng += "cat ";
  r = s.post("/v1/embeddings", json{{"input", lng}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["code"], "context_length_exceeded");
  r = s.post("/v1/embeddings", R"({"input":[[1,2],[1,512]]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["param"], "input");

  // 64 inputs, far more than the 2 slots and 4 queued requests: served in waves, in order.
  json inputs = json::array();
  for (int i = 0; i < 64; ++i) inputs.push_back(i == 37 ? std::string("The cat sat on the mat.") : "input " + std::to_string(i));
  r = s.post("/v1/embeddings", json{{"input", inputs}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  ASSERT_EQ(r.json()["data"].size(), 64u);
  const std::vector<float> v37 = r.json()["data"][37]["embedding"];
  for (size_t i = 0; i < dim; ++i) EXPECT_NEAR(v37[i], one[i], 1e-5);
}

TEST_F(ServeApps, EmbeddingsPoolLastOrFirst) {
  const std::string body = R"({"input":"The cat sat on the mat."})";
  Served mean, last({}, llm::Pooling::last), cls({}, llm::Pooling::cls);
  const std::vector<float> m = mean.post("/v1/embeddings", body).json()["data"][0]["embedding"];
  const std::vector<float> l = last.post("/v1/embeddings", body).json()["data"][0]["embedding"];
  const std::vector<float> c = cls.post("/v1/embeddings", body).json()["data"][0]["embedding"];
  ASSERT_EQ(l.size(), m.size());
  EXPECT_NE(l, m);
  EXPECT_NE(c, m);
  EXPECT_NE(c, l);
  // cls is the first token's state: BOS alone, whatever follows.
  EXPECT_EQ(cls.post("/v1/embeddings", R"({"input":"A dog."})").json()["data"][0]["embedding"], json(c));
}

TEST_F(ServeApps, ChatPageServedWithItsPolicy) {
  Served s("sekrit");
  httplib::Client c = test::client(s.port());
  auto page = c.Get("/");  // no key: the page asks for it
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  const std::string csp = page->get_header_value("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe"), std::string::npos);
  EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(page->body.find("<script src=\"chat.js\">"), std::string::npos);
  for (const char* path : {"/", "/chat.js", "/chat.css", "/index.html"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    // Nothing fetched from elsewhere: no URL with a scheme or a protocol-relative one.
    EXPECT_EQ(r->body.find("http://"), std::string::npos) << path;
    EXPECT_EQ(r->body.find("https://"), std::string::npos) << path;
    EXPECT_EQ(r->body.find("//cdn"), std::string::npos) << path;
    EXPECT_EQ(r->body.find("innerHTML"), std::string::npos) << path;  // text only, never markup
  }
  EXPECT_EQ(c.Get("/chat.js")->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  // The API behind it still needs the key.
  const std::pair<const char*, const char*> routes[] = {
      {"/tokenize", R"({"content":"a"})"}, {"/detokenize", R"({"tokens":[1]})"}, {"/v1/embeddings", R"({"input":"a"})"}};
  for (const auto& [path, body] : routes) {
    EXPECT_EQ(request(s.port(), "POST", path, body).status, 401) << path;
    EXPECT_EQ(request(s.port(), "POST", path, body, "sekrit").status, 200) << path;
  }
}

// Every new route and field with hostile bodies: each a 4xx with an OpenAI error body, and the
// server still answers afterwards.
TEST_F(ServeApps, HostileBodiesOfTheNewRoutes) {
  Served s;
  const std::string big(900 << 10, 'a');
  const std::pair<const char*, std::string> cases[] = {
      {"/tokenize", ""},
      {"/tokenize", "{\"content\":"},
      {"/tokenize", R"({"content":["a"]})"},
      {"/tokenize", R"({"content":"a","with_pieces":"true"})"},
      {"/detokenize", R"({"tokens":[1e400]})"},
      {"/detokenize", R"({"tokens":[-2147483649]})"},
      {"/detokenize", R"({"tokens":{"0":1}})"},
      {"/v1/embeddings", R"({"input":null})"},
      {"/v1/embeddings", R"({"input":[[[1]]]})"},
      {"/v1/embeddings", R"({"input":"a","encoding_format":null,"dimensions":-5})"},
      {"/v1/embeddings", "{\"input\":\"" + big + "\"}"},
      {"/v1/embeddings", "{\"input\":" + std::string(400000, '[') + std::string(400000, ']') + "}"},
      {"/detokenize", "{\"tokens\":" + std::string(400000, '[') + std::string(400000, ']') + "}"},
      {"/tokenize", "{\"content\":" + std::string(400000, '[') + std::string(400000, ']') + "}"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"a"}],"logprobs":true,"top_logprobs":1000000})"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"a"}],"n_probs":1e308})"},
      {"/v1/completions", R"({"prompt":"a","logprobs":4294967297})"},
      {"/v1/completions", R"({"prompt":"a","n_probs":100000})"},
  };
  for (const auto& [path, body] : cases) {
    const test::Reply r = s.post(path, body);
    EXPECT_EQ(r.status, 400) << path << " " << body.substr(0, 80);
    EXPECT_TRUE(r.json()["error"]["message"].is_string()) << r.body.substr(0, 200);
  }
  for (const char* path : {"/tokenize", "/detokenize", "/v1/embeddings"}) {
    const test::Reply r = request(s.port(), "GET", path);
    EXPECT_EQ(r.status, 405) << path;
    EXPECT_EQ(r.json()["error"]["code"], "method_not_allowed");
  }
  // A large text to tokenize is served (bounded by the body limit), the server still answers.
  const test::Reply t = s.post("/tokenize", "{\"content\":\"" + big + "\"}");
  EXPECT_EQ(t.status, 200);
  EXPECT_EQ(request(s.port(), "GET", "/health").status, 200);
}

}  // namespace
}  // namespace qmm::serve
