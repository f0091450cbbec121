// qmm serve's cluster contract inside one process: the metrics registry and its text format,
// GET /metrics over the real engine (stories260K), /live, and the drain (readiness 503, new
// requests 503 with Retry-After, in-flight requests answered whole).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "../llm/test_models.h"
#include "llm/model.h"
#include "text/tokenizer.h"
#include "metrics_test_util.h"
#include "qmm/server/engine_backend.h"
#include "server_test_util.h"

namespace qmm::serve {
namespace {

using nlohmann::json;
using test::request;

httplib::Response get(int port, const std::string& path, const std::string& key = {}) {
  httplib::Client c = test::client(port);
  httplib::Headers h;
  if (!key.empty()) h.emplace("Authorization", "Bearer " + key);
  auto r = c.Get(path.c_str(), h);
  return r ? *r : httplib::Response{};
}

TEST(ServeMetrics, RegistryRendersTheTextFormat) {
  Registry r;
  r.counter("a_total", "Things.").add(3);
  r.counter("b_total", "By kind.", "kind=\"x\"").add();
  r.counter("b_total", "By kind.", "kind=\"y\"").add(2.5);
  r.counter("b_total", "By kind.", "kind=\"x\"").add();  // the same series again
  r.gauge("g", "A level.").set(-1);
  r.gauge_fn("f", "Computed.", [] { return 0.25; });
  Histogram& h = r.histogram("h_seconds", "Times.", {1, 2});
  for (const double v : {0.5, 1.0, 1.5, 3.0}) h.observe(v);  // a bound is inclusive (le)
  EXPECT_EQ(r.render(),
            "# HELP a_total Things.\n# TYPE a_total counter\na_total 3\n"
            "# HELP b_total By kind.\n# TYPE b_total counter\nb_total{kind=\"x\"} 2\nb_total{kind=\"y\"} 2.5\n"
            "# HELP g A level.\n# TYPE g gauge\ng -1\n"
            "# HELP f Computed.\n# TYPE f gauge\nf 0.25\n"
            "# HELP h_seconds Times.\n# TYPE h_seconds histogram\n"
            "h_seconds_bucket{le=\"1\"} 2\nh_seconds_bucket{le=\"2\"} 3\nh_seconds_bucket{le=\"+Inf\"} 4\n"
            "h_seconds_sum 6\nh_seconds_count 4\n");
  EXPECT_THROW(r.gauge("a_total", "Things."), std::logic_error);
  EXPECT_THROW(r.gauge("f", "Computed."), std::logic_error);
  EXPECT_THROW(r.histogram("bad", "Bounds.", {2, 1}), std::logic_error);
}

// Bumps from many threads, new series registered and scrapes rendered meanwhile: no count is
// lost and every scrape parses.
TEST(ServeMetrics, RegistryIsThreadSafe) {
  Registry r;
  Value& c = r.counter("c_total", "C.");
  Histogram& h = r.histogram("h", "H.", {0.5});
  std::atomic<bool> done{false};
  std::thread scraper([&] {
    while (!done) {
      std::map<std::string, double> m;
      std::string bad;
      ASSERT_TRUE(test::parse_metrics(r.render(), m, &bad)) << bad;
    }
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        c.add();
        h.observe(i % 2 ? 1.0 : 0.0);
        if (i % 1000 == 0) r.counter("l_total", "L.", "t=\"" + std::to_string(t) + "\"").add();
      }
    });
  }
  for (std::thread& t : ts) t.join();
  done = true;
  scraper.join();
  const auto m = test::metrics_of(r.render());
  EXPECT_EQ(m.at("c_total"), 80000);
  EXPECT_EQ(m.at("h_count"), 80000);
  EXPECT_EQ(m.at("h_bucket{le=\"0.5\"}"), 40000);
  EXPECT_EQ(m.at("h_sum"), 40000);
  EXPECT_EQ(m.at("l_total{t=\"3\"}"), 20);
}

// A backend whose every job emits `words` words, one per `delay`, each on its own thread.
class SlowBackend : public Backend {
 public:
  SlowBackend(size_t words, std::chrono::milliseconds delay) : words_(words), delay_(delay) {}
  ~SlowBackend() override {
    for (std::thread& t : threads_) t.join();
  }
  std::shared_ptr<Job> submit(Request r) override {
    auto job = std::make_shared<Job>(std::move(r));
    ++active_;
    threads_.emplace_back([this, job] {
      size_t i = 0;
      for (; i < words_ && !job->cancelled(); ++i) {
        std::this_thread::sleep_for(delay_);
        job->emit((i ? " w" : "w") + std::to_string(i));
      }
      --active_;
      job->finish(Finish::length, {1, i});
    });
    return job;
  }
  Load load() const override { return {4, active_.load(), 0}; }

 private:
  size_t words_;
  std::chrono::milliseconds delay_;
  std::atomic<size_t> active_{0};
  std::vector<std::thread> threads_;  // (submit is called from HTTP workers one at a time in these tests)
};

ServerOptions options(std::string key = {}) {
  ServerOptions o;
  o.model_id = "slow";
  o.api_key = std::move(key);
  o.threads = 8;
  return o;
}

TEST(ServeMetrics, OffIs501AndNeedsTheKey) {
  SlowBackend b(1, std::chrono::milliseconds(0));
  {
    test::TestServer s(b, options());
    const httplib::Response r = get(s.port(), "/metrics");
    EXPECT_EQ(r.status, 501);
    EXPECT_EQ(json::parse(r.body)["error"]["type"], "not_supported_error") << r.body;
    EXPECT_NE(json::parse(r.body)["error"]["message"].get<std::string>().find("--metrics"), std::string::npos);
  }
  ServeMetrics m;
  test::TestServer s(b, options("sesame"), &m);
  EXPECT_EQ(get(s.port(), "/metrics").status, 401);
  const httplib::Response r = get(s.port(), "/metrics", "sesame");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.get_header_value("Content-Type"), kMetricsContentType);
  const auto v = test::metrics_of(r.body);
  EXPECT_EQ(v.at("qmm:http_requests_total{code=\"401\"}"), 1);
  EXPECT_EQ(v.at("qmm:draining"), 0);
  EXPECT_EQ(v.at("qmm:slots"), 4);
  EXPECT_EQ(get(s.port(), "/live").status, 200);  // no key: a probe
}

// While the model loads: readiness 503 (with Retry-After), liveness 200, so a liveness probe
// never kills a slow load.
TEST(ServeDrain, WhileLoadingLiveIs200AndHealthSaysRetry) {
  struct Loading : Backend {
    std::shared_ptr<Job> submit(Request) override { throw ApiError(503, "Loading model", {}, "loading"); }
    Load load() const override { return Load{0, 0, 0, 0, true}; }
  } b;
  ServeMetrics m;
  test::TestServer s(b, options(), &m);
  const httplib::Response h = get(s.port(), "/health");
  EXPECT_EQ(h.status, 503);
  EXPECT_EQ(h.get_header_value("Retry-After"), "1");
  EXPECT_EQ(json::parse(h.body)["error"]["message"], "Loading model");
  EXPECT_EQ(get(s.port(), "/live").status, 200);
  const auto v = test::metrics_of(get(s.port(), "/metrics").body);
  EXPECT_EQ(v.at("llamacpp:kv_cache_usage_ratio"), 0);
  EXPECT_EQ(v.at("qmm:http_requests_total{code=\"503\"}"), 1);
}

// SIGTERM's drain at the HTTP level: readiness goes 503 at once, a new request is a 503 with
// Retry-After on a closing connection, liveness and metrics still answer, and the stream in
// flight is answered to its end.
TEST(ServeDrain, RefusesNewRequestsAndFinishesThoseInFlight) {
  SlowBackend b(40, std::chrono::milliseconds(5));
  ServeMetrics m;
  test::TestServer s(b, options(), &m);
  EXPECT_EQ(get(s.port(), "/health").status, 200);
  std::atomic<bool> started{false};
  test::Stream st;
  std::thread client([&] {
    st = test::stream(s.port(), "/v1/completions", R"({"prompt":"x","stream":true})", [&](size_t) {
      started = true;
      return true;
    });
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(s.http().in_flight(), 1u);
  s.http().drain();

  const httplib::Response h = get(s.port(), "/health");
  EXPECT_EQ(h.status, 503);
  EXPECT_EQ(h.get_header_value("Retry-After"), "1");
  EXPECT_EQ(json::parse(h.body)["error"]["type"], "unavailable_error") << h.body;
  httplib::Client c = test::client(s.port());
  const auto refused = c.Post("/v1/completions", R"({"prompt":"y"})", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  EXPECT_EQ(refused->get_header_value("Connection"), "close");
  const auto embedding = c.Post("/v1/embeddings", R"({"input":"y"})", "application/json");  // (on a new connection)
  ASSERT_TRUE(embedding);
  EXPECT_EQ(embedding->status, 503);
  EXPECT_EQ(get(s.port(), "/live").status, 200);
  const auto v = test::metrics_of(get(s.port(), "/metrics").body);
  EXPECT_EQ(v.at("qmm:draining"), 1);

  client.join();
  ASSERT_EQ(st.status, 200);
  ASSERT_GE(st.events.size(), 2u);
  EXPECT_EQ(st.events.back(), "[DONE]");
  EXPECT_EQ(json::parse(st.events[st.events.size() - 2])["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(test::streamed_text(st).substr(0, 8), "w0 w1 w2");
  for (int i = 0; i < 1000 && s.http().in_flight() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(s.http().in_flight(), 0u);
}

// Over the real engine: the token counters equal the answers' usage, every request has one
// time-to-first-token and (tokens - 1) inter-token latencies, each answer is counted by status,
// and the engine's gauges are in range.
TEST(ServeMetrics, CountTheEngine) {
  QMM_REQUIRE_STORIES260K();
  test::Stories& st = test::stories();
  ServeMetrics m;
  EngineBackend backend(st.model, st.tok, st.ctx, {2, 256, 64, 4}, std::nullopt, &m);
  test::TestServer s(backend, options(), &m);
  size_t prompt = 0, generated = 0;
  for (const char* body : {R"({"prompt":"Once upon a time","max_tokens":12,"temperature":0})",
                           R"({"prompt":"The little dog","max_tokens":7,"temperature":0})"}) {
    const test::Reply r = request(s.port(), "POST", "/v1/completions", body);
    ASSERT_EQ(r.status, 200) << r.body;
    prompt += r.json()["usage"]["prompt_tokens"].get<size_t>();
    generated += r.json()["usage"]["completion_tokens"].get<size_t>();
  }
  const test::Stream sse = test::stream(
      s.port(), "/v1/completions",
      R"({"prompt":"Lily","max_tokens":9,"temperature":0,"stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_EQ(sse.status, 200);
  const json usage = json::parse(sse.events[sse.events.size() - 2])["usage"];
  prompt += usage["prompt_tokens"].get<size_t>();
  generated += usage["completion_tokens"].get<size_t>();
  EXPECT_EQ(request(s.port(), "GET", "/nowhere").status, 404);
  EXPECT_EQ(request(s.port(), "POST", "/v1/completions", "{").status, 400);

  const httplib::Response r = get(s.port(), "/metrics");
  std::map<std::string, double> v;
  std::string bad;
  ASSERT_TRUE(test::parse_metrics(r.body, v, &bad)) << bad;
  EXPECT_EQ(v.at("llamacpp:prompt_tokens_total") + v.at("qmm:prompt_tokens_cached_total"), prompt);
  EXPECT_EQ(v.at("llamacpp:tokens_predicted_total"), generated);
  EXPECT_EQ(v.at("qmm:requests_finished_total{finish_reason=\"stop\"}") +
                v.at("qmm:requests_finished_total{finish_reason=\"length\"}"),
            3);
  EXPECT_EQ(v.at("qmm:requests_finished_total{finish_reason=\"error\"}"), 0);
  EXPECT_EQ(v.at("qmm:time_to_first_token_seconds_count"), 3);
  EXPECT_EQ(v.at("qmm:inter_token_latency_seconds_count"), generated - 3);
  EXPECT_GT(v.at("llamacpp:predicted_tokens_seconds"), 0);
  EXPECT_EQ(v.at("qmm:http_requests_total{code=\"200\"}"), 3);
  EXPECT_EQ(v.at("qmm:http_requests_total{code=\"404\"}"), 1);
  EXPECT_EQ(v.at("qmm:http_requests_total{code=\"400\"}"), 1);
  EXPECT_EQ(v.at("llamacpp:requests_processing"), 0);
  EXPECT_EQ(v.at("llamacpp:requests_deferred"), 0);
  EXPECT_GT(v.at("llamacpp:kv_cache_tokens"), 0);  // the slots keep their last conversation
  EXPECT_LE(v.at("llamacpp:kv_cache_tokens"), 2 * 256);
  EXPECT_DOUBLE_EQ(v.at("llamacpp:kv_cache_usage_ratio"), v.at("llamacpp:kv_cache_tokens") / 512);
  EXPECT_GE(v.at("llamacpp:n_decode_total"), generated / 2);
}

// The drain's last step: what is still running when --shutdown-timeout ends is cut with
// finish_reason "abort" and its usage, a clean end of stream, not an error.
TEST(ServeDrain, ShutdownEndsRunningRequestsWithAbort) {
  QMM_REQUIRE_STORIES260K();
  test::Stories& st = test::stories();
  ServeMetrics m;
  EngineBackend backend(st.model, st.tok, st.ctx, {1, 2048, 64, 4}, std::nullopt, &m);
  test::TestServer s(backend, options(), &m);
  std::atomic<bool> started{false};
  test::Stream sse;
  std::thread client([&] {
    sse = test::stream(s.port(), "/v1/completions",
                       R"({"prompt":"Once","max_tokens":2000,"ignore_eos":true,"stream":true,)"
                       R"("stream_options":{"include_usage":true}})",
                       [&](size_t) {
                         if (!started) {
                           started = true;
                           std::this_thread::sleep_for(std::chrono::milliseconds(50));  // while it is cut
                         }
                         return true;
                       });
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  s.http().drain();
  backend.shutdown();
  client.join();
  ASSERT_EQ(sse.status, 200);
  ASSERT_GE(sse.events.size(), 3u);
  EXPECT_EQ(sse.events.back(), "[DONE]");
  const json fin = json::parse(sse.events[sse.events.size() - 3]);
  const json usage = json::parse(sse.events[sse.events.size() - 2])["usage"];
  EXPECT_EQ(fin["choices"][0]["finish_reason"], "abort") << sse.body.substr(sse.body.size() - 400);
  EXPECT_LT(usage["completion_tokens"].get<size_t>(), 2000u);
  const auto v = test::metrics_of(get(s.port(), "/metrics").body);
  EXPECT_EQ(v.at("qmm:requests_finished_total{finish_reason=\"cancelled\"}"), 1);
}

// A full queue is a retryable 503: Retry-After, as the drain's.
TEST(ServeDrain, FullQueueIs503WithRetryAfter) {
  QMM_REQUIRE_STORIES260K();
  test::Stories& st = test::stories();
  EngineBackend backend(st.model, st.tok, st.ctx, {1, 2048, 64, 0}, std::nullopt);  // one request at a time
  test::TestServer s(backend, options());
  const std::string slow = R"({"prompt":"Once","max_tokens":2000,"ignore_eos":true,"stream":true})";
  bool refused = false;
  for (int attempt = 0; attempt < 5 && !refused; ++attempt) {  // (the first may end before the second comes)
    std::atomic<bool> started{false};
    std::thread first([&] {
      test::stream(s.port(), "/v1/completions", slow, [&](size_t) {
        started = true;
        return true;
      });
    });
    while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    httplib::Client c = test::client(s.port());
    const auto r = c.Post("/v1/completions", R"({"prompt":"x","max_tokens":1})", "application/json");
    first.join();
    ASSERT_TRUE(r);
    if (r->status != 503) continue;
    refused = true;
    EXPECT_EQ(r->get_header_value("Retry-After"), "1");
    EXPECT_EQ(json::parse(r->body)["error"]["type"], "unavailable_error");
  }
  EXPECT_TRUE(refused);
}

// Every metric /metrics serves is named in the README's server section and in docs/deploy.md,
// and every `llamacpp:` / `qmm:` name those documents give is served.
TEST(ServeMetrics, EveryMetricIsDocumented) {
  SlowBackend b(1, std::chrono::milliseconds(0));
  ServeMetrics m;
  test::TestServer s(b, options(), &m);
  const std::string text = get(s.port(), "/metrics").body;
  std::set<std::string> served;
  const std::regex type_line("# TYPE ([^ ]+) "), name_in_doc("(llamacpp|qmm):[a-z_]+");
  for (std::sregex_iterator it(text.begin(), text.end(), type_line), end; it != end; ++it) {
    served.insert((*it)[1]);
  }
  ASSERT_GT(served.size(), 10u);
  for (const char* doc : {"/README.md", "/docs/deploy.md"}) {
    std::ifstream in(std::string(QMM_SOURCE_DIR) + doc);
    ASSERT_TRUE(in) << doc;
    const std::string d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const std::string& name : served) EXPECT_NE(d.find("`" + name), std::string::npos) << name << " is not in " << doc;
    for (std::sregex_iterator it(d.begin(), d.end(), name_in_doc), end; it != end; ++it) {
      const std::string name = (*it)[0];
      const bool bucket = name.size() > 7 && name.compare(name.size() - 7, 7, "_bucket") == 0;
      EXPECT_TRUE(served.count(bucket ? name.substr(0, name.size() - 7) : name)) << doc << " names " << name;
    }
  }
}

}  // namespace
}  // namespace qmm::serve
