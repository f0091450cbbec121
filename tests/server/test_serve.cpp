// qmm serve end to end on stories260K over HTTP (127.0.0.1, a free port): the batched engine
// behind the OpenAI routes. Greedy output is the same alone or beside 7 others, streamed or
// not; stop strings, lengths and usage; prompts too long for a slot; 503 when the queue is
// full; a client gone mid-stream frees its slot; and a bounded load test (200 requests from
// 16 clients, some cancelled mid-stream, some malformed) with RSS compared after warm-up and
// at the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <filesystem>
#include <fstream>
#include <random>

#include "llm/model.h"
#include "llm/synth.h"
#include "text/tokenizer.h"
#include "qmm/server/engine_backend.h"
#include "server_test_util.h"
#include "../llm/test_models.h"

namespace qmm::serve {
namespace {

using nlohmann::json;
using test::request;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;  // ASan's quarantine holds freed memory: RSS says nothing there
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

using test::plain_chat_source;
using test::Stories;
using test::stories;

// A plain-text chat format (the tests of real templates are the chat template's own).
llm::ChatFormat plain_chat(const std::string& source = plain_chat_source(),
                           const llm::Tokenizer& tok = stories().tok) {
  return llm::ChatFormat::from_template(tok, source, "test");
}

// One server over stories260K: the backend (engine thread) and the HTTP side.
struct Served {
  EngineBackend backend;
  test::TestServer server;
  Served(size_t slots, size_t n_ctx, size_t queue, size_t threads = 32, Stories& m = stories())
      : backend(m.model, m.tok, m.ctx, {slots, n_ctx, 64, queue}, plain_chat(plain_chat_source(), m.tok)),
        server(backend, [threads] {
          ServerOptions o;
          o.model_id = "stories260K";
          o.threads = threads;
          return o;
        }()) {}
  int port() const { return server.port(); }
};

class ServeEngine : public ::testing::Test {
 protected:
  void SetUp() override { QMM_REQUIRE_STORIES260K(); }
};

std::string completion(const std::string& prompt, size_t max_tokens, bool stream = false, const std::string& extra = {}) {
  json j{{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}, {"stream", stream}};
  std::string s = j.dump();
  if (!extra.empty()) s.insert(s.size() - 1, "," + extra);
  return s;
}

std::string chat(const std::string& user, size_t max_tokens, bool stream = false) {
  return json{{"messages", {{{"role", "system"}, {"content", "You tell stories."}}, {{"role", "user"}, {"content", user}}}},
              {"max_tokens", max_tokens},
              {"temperature", 0},
              {"stream", stream}}
      .dump();
}

const std::vector<std::string> kPrompts = {
    "Once upon a time",      "The little dog",   "Lily and Ben went to the park", "One day, a bird",
    "Tom had a big red ball", "The sun was hot", "Mom said",                       "There was a tree",
};

// The text of a non-streamed answer (choices[0].text or .message.content).
std::string answer_text(const json& j) {
  const json& c = j["choices"][0];
  return c.contains("text") ? c["text"].get<std::string>() : c["message"]["content"].get<std::string>();
}

TEST_F(ServeEngine, CompletionAndChatStreamedOrNot) {
  Served s(2, 256, 4);
  const test::Reply r = request(s.port(), "POST", "/v1/completions", completion("Once upon a time", 20));
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 20);
  EXPECT_EQ(j["usage"]["prompt_tokens"], stories().tok.encode("Once upon a time", true).size());
  EXPECT_EQ(j["usage"]["total_tokens"], j["usage"]["prompt_tokens"].get<int>() + 20);
  EXPECT_EQ(answer_text(j).rfind(", there was a little girl named Lily", 0), 0u) << answer_text(j);

  const test::Stream st = test::stream(s.port(), "/v1/completions", completion("Once upon a time", 20, true));
  EXPECT_EQ(test::streamed_text(st), answer_text(j));
  EXPECT_EQ(st.events.back(), "[DONE]");
  EXPECT_EQ(json::parse(st.events[st.events.size() - 2])["choices"][0]["finish_reason"], "length");

  const test::Reply c = request(s.port(), "POST", "/v1/chat/completions", chat("Tell me a story.", 12));
  ASSERT_EQ(c.status, 200) << c.body;
  EXPECT_EQ(c.json()["usage"]["prompt_tokens"],
            stories().tok.encode("system: You tell stories.\nuser: Tell me a story.\nassistant:", true).size());
  const test::Stream cs = test::stream(s.port(), "/v1/chat/completions", chat("Tell me a story.", 12, true));
  EXPECT_EQ(json::parse(cs.events.front())["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(test::streamed_text(cs), answer_text(c.json()));
  EXPECT_FALSE(answer_text(c.json()).empty());
}

TEST_F(ServeEngine, StopStringsAndEndOfText) {
  Served s(1, 256, 2);
  const json j = request(s.port(), "POST", "/v1/completions", completion("Once upon a time", 40, false, R"("stop":["girl"])")).json();
  EXPECT_EQ(answer_text(j), ", there was a little ");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  const test::Stream st =
      test::stream(s.port(), "/v1/completions", completion("Once upon a time", 40, true, R"("stop":"girl")"));
  EXPECT_EQ(test::streamed_text(st), ", there was a little ");
  // Without a limit, a story ends at EOS (stop) or when the slot's context is full (length).
  const json all = request(s.port(), "POST", "/v1/completions", R"({"prompt":"Once upon a time","temperature":0})").json();
  const std::string why = all["choices"][0]["finish_reason"];
  EXPECT_TRUE(why == "stop" || why == "length") << why;
  EXPECT_LE(all["usage"]["total_tokens"].get<size_t>(), 256u + 1);  // the last token needs no cache row
}

TEST_F(ServeEngine, GreedyAloneEqualsBesideSeven) {
  Served s(8, 512, 16);
  std::vector<std::string> alone(kPrompts.size()), together(kPrompts.size());
  auto run = [&](size_t i, std::vector<std::string>& out) {
    const size_t n = 24 + 3 * i;
    if (i % 2) {
      out[i] = test::streamed_text(test::stream(s.port(), "/v1/completions", completion(kPrompts[i], n, true)));
    } else {
      out[i] = answer_text(request(s.port(), "POST", "/v1/completions", completion(kPrompts[i], n)).json());
    }
  };
  for (size_t i = 0; i < kPrompts.size(); ++i) run(i, alone);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < kPrompts.size(); ++i) clients.emplace_back(run, i, std::ref(together));
  for (std::thread& t : clients) t.join();
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    EXPECT_FALSE(alone[i].empty()) << i;
    EXPECT_EQ(together[i], alone[i]) << "prompt " << i << ": " << kPrompts[i];
  }
}

TEST_F(ServeEngine, PromptLongerThanTheContextIs400) {
  Served s(1, 16, 2);
  std::string longer;
  for (int i = 0; i < 20; ++i) longer += "Once upon a time ";
  const test::Reply r = request(s.port(), "POST", "/v1/completions", completion(longer, 4));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json()["error"]["code"], "context_length_exceeded");
  EXPECT_EQ(r.json()["error"]["param"], "prompt");
  const test::Reply c = request(s.port(), "POST", "/v1/chat/completions", chat(longer, 4));
  EXPECT_EQ(c.status, 400) << c.body;
  EXPECT_EQ(c.json()["error"]["param"], "messages");
  EXPECT_EQ(request(s.port(), "POST", "/v1/completions", completion("Once", 4)).status, 200);
}

TEST_F(ServeEngine, FullQueueIs503) {
  Served s(1, 2048, 1);
  // Bursts of 8 long requests at once into 1 slot + 1 queue place: most must be refused.
  int refused = 0, served = 0;
  for (int round = 0; round < 3 && refused == 0; ++round) {
    std::barrier start(8);
    std::atomic<int> ok{0}, busy{0}, other{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < 8; ++i) {
      clients.emplace_back([&] {
        start.arrive_and_wait();
        const test::Reply r = request(s.port(), "POST", "/v1/completions", completion("Once upon a time", 1500, false, R"("ignore_eos":true)"));
        if (r.status == 200) ++ok;
        else if (r.status == 503 && r.json()["error"]["type"] == "unavailable_error") ++busy;
        else ++other;
      });
    }
    for (std::thread& t : clients) t.join();
    EXPECT_EQ(other, 0);
    refused += busy;
    served += ok;
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(served, 0);
  EXPECT_EQ(request(s.port(), "POST", "/v1/completions", completion("Once", 4)).status, 200);
}

// llama-server's and OpenAI's forms: token ids as the prompt; max_tokens 0 answers the usage
// of the prompt with no completion (lm-eval); the penalties change a greedy text.
TEST_F(ServeEngine, TokenIdsZeroMaxTokensAndPenalties) {
  Served s(1, 256, 2);
  const std::vector<int32_t> ids = stories().tok.encode("Once upon a time", true);
  const test::Reply text = request(s.port(), "POST", "/v1/completions", completion("Once upon a time", 12));
  const test::Reply by_ids = request(s.port(), "POST", "/v1/completions",
                                     json{{"prompt", ids}, {"max_tokens", 12}, {"temperature", 0}}.dump());
  ASSERT_EQ(by_ids.status, 200) << by_ids.body;
  EXPECT_EQ(answer_text(by_ids.json()), answer_text(text.json()));
  EXPECT_EQ(by_ids.json()["usage"]["prompt_tokens"], ids.size());
  const test::Reply zero = request(s.port(), "POST", "/v1/completions", completion("Once upon a time", 0));
  ASSERT_EQ(zero.status, 200) << zero.body;
  EXPECT_EQ(answer_text(zero.json()), "");
  EXPECT_EQ(zero.json()["usage"]["prompt_tokens"], ids.size());
  EXPECT_EQ(zero.json()["usage"]["completion_tokens"], 0);
  const test::Reply bad = request(s.port(), "POST", "/v1/completions", json{{"prompt", {1, 99999}}}.dump());
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.json()["error"]["param"], "prompt");
  const test::Reply penalised = request(s.port(), "POST", "/v1/completions",
                                        completion("Once upon a time", 40, false, R"("frequency_penalty":2,"presence_penalty":2)"));
  const test::Reply plain = request(s.port(), "POST", "/v1/completions", completion("Once upon a time", 40));
  ASSERT_EQ(penalised.status, 200) << penalised.body;
  EXPECT_NE(answer_text(penalised.json()), answer_text(plain.json()));
  const test::Reply tools = request(s.port(), "POST", "/v1/chat/completions",
                                    R"({"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function"}]})");
  EXPECT_EQ(tools.status, 400) << tools.body;  // a tool without its function (test_tools.cpp has the rest)
  EXPECT_EQ(tools.json()["error"]["param"], "tools[0]");
}

// Several prompts in one completion request: one choice each, in order, the same text as alone;
// streamed, each chunk names its choice.
TEST_F(ServeEngine, BatchOfPromptsIsOneChoiceEach) {
  Served s(2, 256, 4);
  const std::vector<int32_t> dog = stories().tok.encode("The little dog", true);
  const std::string once = answer_text(request(s.port(), "POST", "/v1/completions", completion("Once upon a time", 10)).json());
  const std::string little = answer_text(request(s.port(), "POST", "/v1/completions", completion("The little dog", 10)).json());
  const json body{{"prompt", {json("Once upon a time"), json(dog), json("Once upon a time")}}, {"max_tokens", 10}, {"temperature", 0}};
  const test::Reply r = request(s.port(), "POST", "/v1/completions", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  ASSERT_EQ(j["choices"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(j["choices"][i]["index"], i);
  EXPECT_EQ(j["choices"][0]["text"], once);
  EXPECT_EQ(j["choices"][1]["text"], little);
  EXPECT_EQ(j["choices"][2]["text"], once);
  EXPECT_EQ(j["usage"]["completion_tokens"], 30);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 2 * stories().tok.encode("Once upon a time", true).size() + dog.size());

  json streamed = body;
  streamed["stream"] = true;
  streamed["stream_options"] = {{"include_usage", true}};
  const test::Stream st = test::stream(s.port(), "/v1/completions", streamed.dump());
  std::vector<std::string> texts(3);
  size_t finishes = 0;
  for (const std::string& ev : st.events) {
    if (ev == "[DONE]") continue;
    const json c = json::parse(ev);
    if (c["choices"].empty()) {
      EXPECT_EQ(c["usage"]["completion_tokens"], 30);
      continue;
    }
    const size_t i = c["choices"][0]["index"];
    ASSERT_LT(i, 3u);
    texts[i] += c["choices"][0]["text"].get<std::string>();
    finishes += !c["choices"][0]["finish_reason"].is_null();
  }
  EXPECT_EQ(finishes, 3u);
  EXPECT_EQ(texts, (std::vector<std::string>{once, little, once}));
  EXPECT_EQ(st.events.back(), "[DONE]");
}

// A default server (4 slots, queue 8) takes a burst of 12 at once: the queue is what waits
// beside the running slots, not a cap on everything not yet handed to the engine.
TEST_F(ServeEngine, BurstOfSlotsPlusQueueIsServed) {
  Served s(4, 512, 8);
  for (int round = 0; round < 3; ++round) {
    std::barrier start(12);
    std::atomic<int> ok{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < 12; ++i) {
      clients.emplace_back([&] {
        start.arrive_and_wait();
        const test::Reply r = request(s.port(), "POST", "/v1/completions",
                                      completion("Once upon a time", 200, false, R"("ignore_eos":true)"));
        ok += r.status == 200;
        EXPECT_EQ(r.status, 200) << r.body;
      });
    }
    for (std::thread& t : clients) t.join();
    EXPECT_EQ(ok, 12);
  }
}

TEST_F(ServeEngine, ClientGoneMidStreamFreesTheSlot) {
  Served s(1, 2048, 2);
  // 2000 tokens through EOS: only a cancel ends it early.
  const test::Stream st = test::stream(s.port(), "/v1/completions",
                                       completion("Once upon a time", 2000, true, R"("ignore_eos":true)"),
                                       [](size_t n) { return n < 3; });
  EXPECT_EQ(st.events.size(), 3u);
  json h;
  for (int i = 0; i < 1000; ++i) {
    h = request(s.port(), "GET", "/health").json();
    if (h["requests_cancelled"] == 1 && h["slots_processing"] == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(h["requests_cancelled"], 1);
  EXPECT_EQ(h["slots_processing"], 0);
  EXPECT_EQ(h["requests_queued"], 0);
  EXPECT_EQ(request(s.port(), "POST", "/v1/completions", completion("Once", 4)).status, 200);
}

TEST_F(ServeEngine, TemplatesThatWriteBosGetNoSecondOne) {
  const llm::Tokenizer& tok = stories().tok;
  EngineBackend own(stories().model, tok, stories().ctx, {1, 64, 16, 1},
                    plain_chat("{{ bos_token + messages[0].content }}"));
  EngineBackend plain(stories().model, tok, stories().ctx, {1, 64, 16, 1}, plain_chat("{{ messages[0].content }}"));
  Request r;
  r.messages = {{"user", "Once upon a time"}};
  const std::vector<int32_t> expect = tok.encode("Once upon a time", true);
  EXPECT_EQ(own.prompt_tokens(r), expect);
  EXPECT_EQ(plain.prompt_tokens(r), expect);
  EngineBackend none(stories().model, tok, stories().ctx, {1, 64, 16, 1}, std::nullopt);
  try {
    none.prompt_tokens(r);
    ADD_FAILURE() << "a chat without a template was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_NE(std::string(e.what()).find("--chat-template"), std::string::npos) << e.what();
  }
}

size_t rss_bytes() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// 200 requests from 16 clients: greedy completions and chats of random lengths (streamed or
// not) checked against the same prompt's answer alone, sampled ones, streams the client
// abandons after a few events, and malformed requests. Every well-formed request must
// complete correctly, every malformed one get its 4xx, and the server must end idle.
TEST_F(ServeEngine, BoundedLoad) {
  constexpr int kClients = 16, kRequests = 200, kMaxTokens = 48;
  Served s(4, 512, kClients + 4);
  std::vector<std::string> reference;
  for (const std::string& p : kPrompts) {
    reference.push_back(answer_text(request(s.port(), "POST", "/v1/completions", completion(p, kMaxTokens)).json()));
  }
  std::atomic<int> next{0}, good{0}, bad{0}, cancelled{0}, malformed{0};
  std::mutex fail_mu;
  std::vector<std::string> failures;
  size_t rss_warm = 0;
  std::barrier warm(kClients, [&]() noexcept { rss_warm = rss_bytes(); });
  auto client = [&](int c) {
    std::mt19937 rng(1234 + c);
    auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    bool warmed = false;
    for (int i; (i = next++) < kRequests;) {
      if (!warmed && i >= 2 * kClients) {
        warmed = true;
        warm.arrive_and_wait();
      }
      const int kind = pick(20);
      const size_t p = static_cast<size_t>(pick(static_cast<int>(kPrompts.size())));
      const size_t n = 1 + static_cast<size_t>(pick(kMaxTokens));
      std::string why;
      if (kind < 10) {  // greedy: a prefix of the answer alone, exactly n tokens unless it stopped
        const bool streamed = kind % 2;
        std::string text;
        if (streamed) {
          const test::Stream st = test::stream(s.port(), "/v1/completions", completion(kPrompts[p], n, true));
          text = test::streamed_text(st);
          if (st.status != 200 || st.events.empty() || st.events.back() != "[DONE]") why = "stream: " + st.body;
        } else {
          const test::Reply r = request(s.port(), "POST", "/v1/completions", completion(kPrompts[p], n));
          const json j = r.json();
          if (r.status != 200) {
            why = r.body;
          } else {
            text = answer_text(j);
            const size_t got = j["usage"]["completion_tokens"];
            if (j["choices"][0]["finish_reason"] == "length" && got != n) why = "length with " + std::to_string(got) + " tokens";
          }
        }
        if (why.empty() && reference[p].rfind(text, 0) != 0) why = "'" + text + "' is not a prefix of '" + reference[p] + "'";
      } else if (kind < 13) {  // chat, sampled
        const std::string body = json{{"messages", {{{"role", "user"}, {"content", kPrompts[p]}}}},
                                      {"max_tokens", n}, {"temperature", 0.9}, {"seed", i}}.dump();
        const test::Reply r = request(s.port(), "POST", "/v1/chat/completions", body);
        if (r.status != 200 || r.json()["usage"]["completion_tokens"].get<size_t>() > n) why = r.body;
      } else if (kind < 16) {  // abandoned mid-stream
        const size_t keep = 1 + static_cast<size_t>(pick(4));
        test::stream(s.port(), "/v1/chat/completions", chat(kPrompts[p], 400, true), [keep](size_t e) { return e < keep; });
        ++cancelled;
        continue;
      } else {  // malformed: each must get its own 4xx
        static const std::pair<const char*, int> kBad[] = {
            {"{\"prompt\":", 400}, {R"({"prompt":"x","max_tokens":-1})", 400}, {R"({"prompt":7})", 400}, {"", 400}};
        const auto& [body, status] = kBad[pick(4)];
        const test::Reply r = request(s.port(), "POST", kind == 19 ? "/v1/nope" : "/v1/completions", body);
        const int want = kind == 19 ? 404 : status;
        if (r.status != want || !r.json().contains("error")) why = "malformed got " + std::to_string(r.status) + ": " + r.body;
        ++malformed;
        if (why.empty()) continue;
      }
      if (why.empty()) {
        ++good;
      } else {
        ++bad;
        std::lock_guard l(fail_mu);
        failures.push_back("request " + std::to_string(i) + ": " + why);
      }
    }
    if (!warmed) warm.arrive_and_wait();
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) clients.emplace_back(client, c);
  for (std::thread& t : clients) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  json h;
  for (int i = 0; i < 400; ++i) {  // the abandoned streams' cancels reach the engine
    h = request(s.port(), "GET", "/health").json();
    if (h["slots_processing"] == 0 && h["requests_queued"] == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const size_t rss_end = rss_bytes();
  std::printf("load: %d requests from %d clients in %.2f s: %d well-formed ok, %d failed, %d abandoned mid-stream, "
              "%d malformed; RSS after warm-up %.1f MiB, at the end %.1f MiB\n",
              kRequests, kClients, seconds, good.load(), bad.load(), cancelled.load(), malformed.load(),
              static_cast<double>(rss_warm) / (1 << 20), static_cast<double>(rss_end) / (1 << 20));
  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(good + cancelled + malformed, kRequests);
  EXPECT_GT(cancelled, 0);
  EXPECT_GT(malformed, 0);
  EXPECT_EQ(h["slots_processing"], 0);
  EXPECT_EQ(h["requests_queued"], 0);
  if (!kAsan) {
    EXPECT_LT(rss_end, rss_warm + (24u << 20)) << "RSS grew from warm-up to the end";
  }
}

// Issue 22's hostile load on a server: 32 clients sending their headers a byte at a time
// (coming back when cut), 200 silent connections, 20 pathological prompts (a 1 MB word:
// refused by its size against the context, before tokenizing) and 20 chats of 256 KB at once,
// while the process's RSS is sampled every 10 ms. The large requests are written from two
// shared buffers on raw sockets: the clients' own memory (this process's too) stays out of it.
class HostileClients {
 public:
  explicit HostileClients(int port) : rss_peak_(rss_bytes()) {
    threads_.emplace_back([this, port] {  // slow and silent clients
      std::vector<int> slow(32), idle(200);
      for (int& fd : slow) fd = test::connect_to(port);
      for (int& fd : idle) fd = test::connect_to(port);
      const std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ";
      for (size_t b = 0; !stop_; ++b) {
        for (int& fd : slow) {
          if (::send(fd, &head[b % head.size()], 1, MSG_NOSIGNAL) != 1) {  // cut at its deadline: come back
            ::close(fd);
            fd = test::connect_to(port);
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      for (int fd : slow) ::close(fd);
      for (int fd : idle) ::close(fd);
    });
    threads_.emplace_back([this] {
      while (!stop_) {
        rss_peak_ = std::max<size_t>(rss_peak_, rss_bytes());
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
    auto raw_post = [](const char* path, const std::string& b) {
      return std::string("POST ") + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n" +
             "Content-Length: " + std::to_string(b.size()) + "\r\n\r\n" + b;
    };
    big_completion_ = raw_post("/v1/completions", completion(std::string(1000000, 'a'), 4));
    big_chat_ = raw_post("/v1/chat/completions",
                         json{{"messages", {{{"role", "user"}, {"content", std::string(256 << 10, 'b')}}}}, {"max_tokens", 4}}.dump());
    for (int i = 0; i < 40; ++i) {
      threads_.emplace_back([this, i, port] {
        const int fd = test::connect_to(port);
        if (test::send_all(fd, i < 20 ? big_completion_ : big_chat_)) {
          const std::string r = test::receive(fd, std::chrono::seconds(10));
          refused_ += r.rfind("HTTP/1.1 400", 0) == 0 && r.find("context_length_exceeded") != std::string::npos;
        }
        ::close(fd);
      });
    }
  }
  // Ends the load; the number of large requests refused as too long for the context.
  int stop() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    return refused_;
  }
  ~HostileClients() {
    if (!threads_.empty()) stop();
  }
  size_t rss_peak() const { return rss_peak_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<size_t> rss_peak_;
  std::atomic<int> refused_{0};
  std::string big_completion_, big_chat_;
  std::vector<std::thread> threads_;
};

// The hostile load beside a normal client: its requests take at most twice their unloaded
// time (+ 50 ms for a shared machine), and RSS grows by a bounded amount (large requests are
// handled two at a time, long prompts built one at a time: 20 chats of 256 KB at once would
// take ~400 MB otherwise). stories260K's steady state (~14 MiB) is too small for the issue's
// 1.5x: the next test checks that on a larger model.
TEST_F(ServeEngine, HostileLoad) {
  limit_malloc_retention();  // as qmm serve does
  Served s(4, 512, 8);
  const std::string body = completion(kPrompts[0], 256, false, R"("ignore_eos":true)");
  auto median_seconds = [&] {
    std::vector<double> t;
    for (int i = 0; i < 7; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const test::Reply r = request(s.port(), "POST", "/v1/completions", body);
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      EXPECT_EQ(r.status, 200) << r.body;
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  median_seconds();  // warm-up
  const double unloaded = median_seconds();
  const size_t rss_steady = rss_bytes();
  HostileClients hostile(s.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double loaded = median_seconds();
  EXPECT_EQ(hostile.stop(), 40);
  std::printf("hostile load: a 256-token completion %.1f ms alone, %.1f ms under load; RSS %.1f MiB steady, %.1f MiB at most\n",
              unloaded * 1e3, loaded * 1e3, static_cast<double>(rss_steady) / (1 << 20),
              static_cast<double>(hostile.rss_peak()) / (1 << 20));
  EXPECT_LT(loaded, 2 * unloaded + 0.05);
  if (!kAsan) {
    EXPECT_LT(hostile.rss_peak(), rss_steady + (64u << 20)) << "RSS grows with the hostile clients";
  }
}

// The issue's bound, RSS within 1.5x its steady state under the hostile load, on a server whose
// steady state is that of a small real model rather than stories260K's ~14 MiB: a synthetic
// Llama of 32,000 tokens, width 512, 4 layers, F32 (~193 MiB steady; at most 1.14x seen). The
// load's own growth (20-25 MiB on either model) does not depend on the model, so 1.5x holds
// for any model of more than ~50 MiB, not for stories260K.
TEST_F(ServeEngine, HostileLoadRssWithinOneAndAHalfTimesSteadyState) {
  if (kAsan) GTEST_SKIP() << "ASan's quarantine holds freed memory: RSS says nothing there";
  limit_malloc_retention();
  gguf::SynthShape shape = *gguf::find_synth_shape("tiny");
  shape.name = "rss";
  shape.dim = 512, shape.layers = 4, shape.heads = 8, shape.kv_heads = 4, shape.head_dim = 64, shape.ffn = 1536;
  shape.vocab = 32000, shape.context = 512;
  const std::string path = (std::filesystem::temp_directory_path() / ("qmm-rss-" + std::to_string(::getpid()) + ".gguf")).string();
  gguf::synth_model(shape, WeightType::f32, 1, path, 1);
  {
    Stories model(path);
    Served s(4, 512, 8, 32, model);
    const std::string body = completion(kPrompts[0], 8, false, R"("ignore_eos":true)");
    for (int i = 0; i < 3; ++i) EXPECT_EQ(request(s.port(), "POST", "/v1/completions", body).status, 200);  // warm-up
    const size_t rss_steady = rss_bytes();
    HostileClients hostile(s.port());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(request(s.port(), "POST", "/v1/completions", body).status, 200);
    // (Its 32,000-token vocabulary tokenizes the long chats more slowly than stories260K's: on a
    // busy machine some are still waiting when their clients give up after 10 s.)
    const int refused = hostile.stop();
    EXPECT_GT(refused, 0);
    std::printf("hostile load on a larger model: RSS %.1f MiB steady, %.1f MiB at most (%.2fx); %d of 40 large requests refused\n",
                static_cast<double>(rss_steady) / (1 << 20), static_cast<double>(hostile.rss_peak()) / (1 << 20),
                static_cast<double>(hostile.rss_peak()) / static_cast<double>(rss_steady), refused);
    EXPECT_LT(static_cast<double>(hostile.rss_peak()), 1.5 * static_cast<double>(rss_steady));
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace qmm::serve
