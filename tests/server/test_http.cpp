// The HTTP layer of qmm serve over a scripted backend (no model): routes, the API key,
// OpenAI-style error bodies with the right status for every failure, SSE framing, and a
// client that goes away mid-stream cancelling its job. The server keeps serving after each.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "server_test_util.h"

namespace qmm::serve {
namespace {

using nlohmann::json;
using test::request;

// Answers every request with "w0 w1 ... w(N-1)" (N = max_tokens, default 4), one word per
// `delay`, on one worker thread. Refuses (503) beyond `capacity` jobs waiting or running.
class ScriptedBackend : public Backend {
 public:
  explicit ScriptedBackend(size_t capacity, std::chrono::milliseconds delay = std::chrono::milliseconds(0))
      : capacity_(capacity), delay_(delay), worker_([this] { work(); }) {}
  ~ScriptedBackend() override {
    {
      std::lock_guard l(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  std::shared_ptr<Job> submit(Request r) override {
    std::lock_guard l(mu_);
    if (jobs_.size() >= capacity_) throw ApiError(503, "all slots are busy and the queue is full");
    jobs_.push_back(std::make_shared<Job>(std::move(r)));
    cv_.notify_all();
    return jobs_.back();
  }
  Load load() const override {
    std::lock_guard l(mu_);
    return {1, jobs_.empty() ? 0u : 1u, jobs_.empty() ? 0u : jobs_.size() - 1};
  }
  int cancelled() const { return cancelled_; }
  std::atomic<bool> hold{false};  // while set, a finished job keeps its slot (a busy server, whatever the timing)

 private:
  void work() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock l(mu_);
        cv_.wait(l, [this] { return quit_ || !jobs_.empty(); });
        if (quit_) return;
        job = jobs_.front();
      }
      const size_t n = job->request().max_tokens.value_or(4);
      size_t i = 0;
      for (; i < n && !job->cancelled(); ++i) {
        std::this_thread::sleep_for(delay_);
        job->emit((i ? " w" : "w") + std::to_string(i));
      }
      while (hold && !job->cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (job->cancelled()) ++cancelled_;
      {
        std::lock_guard l(mu_);
        jobs_.pop_front();  // before the last event: the client may send its next request at once
      }
      job->finish(Finish::length, {3, i});
    }
  }
  size_t capacity_;
  std::chrono::milliseconds delay_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> jobs_;
  bool quit_ = false;
  std::atomic<int> cancelled_{0};
  std::thread worker_;
};

ServerOptions options(std::string key = {}) {
  ServerOptions o;
  o.model_id = "scripted";
  o.api_key = std::move(key);
  o.threads = 8;
  return o;
}

const std::string kChat = R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":3)";

// Status, error type and param of an error reply (the body must be OpenAI's error shape).
void expect_error(const test::Reply& r, int status, const char* type) {
  EXPECT_EQ(r.status, status) << r.body;
  const json j = r.json();
  ASSERT_TRUE(j.is_object() && j.contains("error")) << r.body;
  for (const char* f : {"message", "type", "param", "code"}) EXPECT_TRUE(j["error"].contains(f)) << f << ": " << r.body;
  EXPECT_EQ(j["error"]["type"], type) << r.body;
  EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
}

TEST(ServeHttp, HealthAndModels) {
  ScriptedBackend b(4);
  test::TestServer s(b, options());
  const test::Reply h = request(s.port(), "GET", "/health");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.json()["status"], "ok");
  const test::Reply m = request(s.port(), "GET", "/v1/models");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.json()["object"], "list");
  EXPECT_EQ(m.json()["data"][0]["id"], "scripted");
  EXPECT_EQ(request(s.port(), "GET", "/v1/models/scripted").json()["id"], "scripted");
}

TEST(ServeHttp, ChatAndCompletion) {
  ScriptedBackend b(4);
  test::TestServer s(b, options());
  const test::Reply c = request(s.port(), "POST", "/v1/chat/completions", kChat + "}");
  ASSERT_EQ(c.status, 200) << c.body;
  const json j = c.json();
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "scripted");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "w0 w1 w2");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_EQ(j["usage"]["total_tokens"], 6);
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);

  const test::Reply p = request(s.port(), "POST", "/v1/completions", R"({"prompt":"x","max_tokens":2,"model":"mine"})");
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(p.json()["object"], "text_completion");
  // llama-server's single-model behaviour: any model name is served by the loaded one, and the
  // answer names that one (the --alias).
  EXPECT_EQ(p.json()["model"], "scripted");
  EXPECT_EQ(p.json()["choices"][0]["text"], "w0 w1");
}

TEST(ServeHttp, StreamsServerSentEvents) {
  ScriptedBackend b(4);
  test::TestServer s(b, options());
  const test::Stream st = test::stream(s.port(), "/v1/chat/completions",
                                       kChat + R"(,"stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_EQ(st.status, 200) << st.body;
  ASSERT_EQ(st.events.size(), 1 + 3 + 1 + 1 + 1u) << st.body;  // role, 3 deltas, finish, usage, [DONE]
  EXPECT_EQ(json::parse(st.events[0])["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(test::streamed_text(st), "w0 w1 w2");
  const json fin = json::parse(st.events[4]);
  EXPECT_EQ(fin["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(fin["object"], "chat.completion.chunk");
  EXPECT_EQ(json::parse(st.events[5])["usage"]["completion_tokens"], 3);
  EXPECT_EQ(st.events.back(), "[DONE]");
  // Every chunk of one stream has the same id.
  EXPECT_EQ(json::parse(st.events[1])["id"], json::parse(st.events[0])["id"]);

  const test::Stream cs = test::stream(s.port(), "/v1/completions", R"({"prompt":"x","max_tokens":2,"stream":true})");
  ASSERT_EQ(cs.events.size(), 2 + 1 + 1u) << cs.body;  // 2 pieces, finish, [DONE]
  EXPECT_EQ(test::streamed_text(cs), "w0 w1");
}

TEST(ServeHttp, ErrorsAreOpenAIStyleAndTheServerGoesOn) {
  ScriptedBackend b(4);
  test::TestServer s(b, options());
  const int p = s.port();
  expect_error(request(p, "POST", "/v1/chat/completions", "{not json"), 400, "invalid_request_error");
  expect_error(request(p, "POST", "/v1/chat/completions", R"({"messages":[]})"), 400, "invalid_request_error");
  expect_error(request(p, "POST", "/v1/chat/completions", R"({"messages":[{"role":"x","content":"a"}]})"), 400,
               "invalid_request_error");
  expect_error(request(p, "POST", "/v1/chat/completions", kChat + R"(,"temperature":9})"), 400, "invalid_request_error");
  expect_error(request(p, "POST", "/v1/chat/completions", ""), 400, "invalid_request_error");
  expect_error(request(p, "GET", "/v1/nothing"), 404, "not_found_error");
  expect_error(request(p, "POST", "/v1/nothing", "{}"), 404, "not_found_error");
  expect_error(request(p, "GET", "/v1/models/other"), 404, "not_found_error");
  expect_error(request(p, "GET", "/v1/chat/completions"), 405, "invalid_request_error");
  expect_error(request(p, "POST", "/health", "{}"), 405, "invalid_request_error");
  const test::Reply big = request(p, "POST", "/v1/chat/completions", std::string(2 << 20, ' '));
  expect_error(big, 413, "invalid_request_error");
  // A form-encoded body is read as the JSON it should be (httplib would parse it as a form).
  httplib::Client c = test::client(p);
  const auto form = c.Post("/v1/chat/completions", kChat + "}", "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 200);
  EXPECT_EQ(request(p, "GET", "/health").status, 200);
  EXPECT_EQ(request(p, "POST", "/v1/chat/completions", kChat + "}").status, 200);
}

TEST(ServeHttp, ApiKey) {
  ScriptedBackend b(4);
  test::TestServer s(b, options("sesame"));
  const int p = s.port();
  expect_error(request(p, "GET", "/v1/models"), 401, "authentication_error");
  expect_error(request(p, "GET", "/v1/models", "", "wrong"), 401, "authentication_error");
  expect_error(request(p, "POST", "/v1/chat/completions", kChat + "}", "sesam"), 401, "authentication_error");
  expect_error(request(p, "POST", "/v1/completions", R"({"prompt":"x"})"), 401, "authentication_error");
  expect_error(request(p, "GET", "/slots"), 401, "authentication_error");
  expect_error(request(p, "POST", "/slots/0?action=erase"), 401, "authentication_error");
  EXPECT_EQ(request(p, "GET", "/health").status, 200);  // health checks need no key
  EXPECT_EQ(request(p, "GET", "/v1/models", "", "sesame").status, 200);
  EXPECT_EQ(request(p, "GET", "/slots", "", "sesame").status, 501);  // a backend without slots
  EXPECT_EQ(request(p, "POST", "/slots/0?action=erase", "", "sesame").status, 501);
  EXPECT_EQ(request(p, "POST", "/v1/chat/completions", kChat + "}", "sesame").status, 200);
}

// llama-server's key header and CORS: an allowed Origin is echoed on every answer, a preflight
// OPTIONS is answered without the key; --cors narrows or disables it.
TEST(ServeHttp, XApiKeyAndCors) {
  ScriptedBackend b(4);
  auto send = [](int port, const char* method, const char* path, httplib::Headers h, const std::string& body = {}) {
    httplib::Client c = test::client(port);
    httplib::Request req;
    req.method = method;
    req.path = path;
    req.headers = std::move(h);
    req.body = body;
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    if (!c.send(req, res, err)) res.status = 0;
    return res;
  };
  {
    test::TestServer s(b, options("sekret"));
    EXPECT_EQ(send(s.port(), "GET", "/v1/models", {{"X-Api-Key", "sekret"}}).status, 200);
    EXPECT_EQ(send(s.port(), "GET", "/v1/models", {{"X-Api-Key", "wrong"}}).status, 401);
    const httplib::Response pre = send(s.port(), "OPTIONS", "/v1/chat/completions",
                                       {{"Origin", "http://example.com"}, {"Access-Control-Request-Method", "POST"}});
    EXPECT_EQ(pre.status, 204);
    EXPECT_EQ(pre.get_header_value("Access-Control-Allow-Origin"), "http://example.com");
    EXPECT_EQ(pre.get_header_value("Access-Control-Allow-Headers"), "*");
    EXPECT_NE(pre.get_header_value("Access-Control-Allow-Methods").find("POST"), std::string::npos);
    const httplib::Response post = send(s.port(), "POST", "/v1/chat/completions",
                                        {{"Origin", "http://example.com"}, {"Authorization", "Bearer sekret"}}, kChat + "}");
    EXPECT_EQ(post.status, 200) << post.body;
    EXPECT_EQ(post.get_header_value("Access-Control-Allow-Origin"), "http://example.com");
    const httplib::Response refused = send(s.port(), "GET", "/v1/models", {{"Origin", "http://example.com"}});
    EXPECT_EQ(refused.status, 401);
    EXPECT_EQ(refused.get_header_value("Access-Control-Allow-Origin"), "http://example.com");  // the browser sees the error
  }
  {
    ServerOptions o = options();
    o.cors = "http://a.test,http://b.test";
    test::TestServer s(b, o);
    EXPECT_EQ(send(s.port(), "GET", "/health", {{"Origin", "http://b.test"}}).get_header_value("Access-Control-Allow-Origin"),
              "http://b.test");
    EXPECT_FALSE(send(s.port(), "GET", "/health", {{"Origin", "http://c.test"}}).has_header("Access-Control-Allow-Origin"));
    EXPECT_FALSE(send(s.port(), "GET", "/health", {{"Origin", "http://a.tes"}}).has_header("Access-Control-Allow-Origin"));
    o.cors = "";
    test::TestServer off(b, o);
    const httplib::Response pre = send(off.port(), "OPTIONS", "/v1/models", {{"Origin", "http://a.test"}});
    EXPECT_FALSE(pre.has_header("Access-Control-Allow-Origin"));
  }
}

// While the model loads, /health is llama-server's 503 "Loading model" (load balancers wait).
TEST(ServeHttp, HealthIs503WhileTheModelLoads) {
  struct Loading : Backend {
    std::shared_ptr<Job> submit(Request) override { throw ApiError(503, "Loading model", {}, "loading"); }
    Load load() const override { return Load{0, 0, 0, 0, true}; }
  } b;
  test::TestServer s(b, options());
  const test::Reply h = request(s.port(), "GET", "/health");
  expect_error(h, 503, "unavailable_error");
  EXPECT_EQ(h.json()["error"]["message"], "Loading model");
  expect_error(request(s.port(), "POST", "/v1/chat/completions", kChat + "}"), 503, "unavailable_error");
}

TEST(ServeHttp, BusyIs503) {
  ScriptedBackend b(1);
  b.hold = true;  // the first job holds the only slot until the refusal was seen, however slow the machine
  test::TestServer s(b, options());
  std::thread slow([&] { request(s.port(), "POST", "/v1/chat/completions", kChat + "}"); });
  while (b.load().active == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  expect_error(request(s.port(), "POST", "/v1/chat/completions", kChat + "}"), 503, "unavailable_error");
  b.hold = false;
  slow.join();
  EXPECT_EQ(request(s.port(), "POST", "/v1/chat/completions", kChat + "}").status, 200);
}

TEST(ServeHttp, ClientGoneMidStreamCancelsTheJob) {
  ScriptedBackend b(2, std::chrono::milliseconds(5));
  test::TestServer s(b, options());
  const test::Stream st = test::stream(s.port(), "/v1/chat/completions", kChat + R"(,"max_tokens":100000,"stream":true})",
                                       [](size_t n) { return n < 3; });
  EXPECT_EQ(st.events.size(), 3u);
  for (int i = 0; i < 2000 && b.cancelled() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(b.cancelled(), 1);
  EXPECT_EQ(b.load().active, 0u);
  EXPECT_EQ(request(s.port(), "POST", "/v1/chat/completions", kChat + "}").status, 200);
}

}  // namespace
}  // namespace qmm::serve
