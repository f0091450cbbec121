// The prompt cache and the slots of qmm serve over HTTP (stories260K, token-id prompts):
// usage.prompt_tokens_details.cached_tokens, the counters /metrics publishes, GET /slots, and
// POST /slots/{id}?action=save|restore|erase with hostile names and files.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>

#include "llm/model.h"
#include "qmm/server/engine_backend.h"
#include "qmm/server/metrics.h"
#include "metrics_test_util.h"
#include "server_test_util.h"
#include "text/tokenizer.h"
#include "../llm/test_models.h"

namespace qmm::serve {
namespace {

using nlohmann::json;
using test::Reply;
using test::request;

using test::stories;

struct Served {
  EngineBackend backend;
  test::TestServer server;
  Served(size_t slots, size_t cache_bytes, const std::string& save_path = {})
      : backend(stories().model, stories().tok, stories().ctx,
                [&] {
                  llm::GeneratorOptions o{slots, 512, 48, 8};
                  o.cache_bytes = cache_bytes;
                  return o;
                }(),
                std::nullopt),
        server(backend, ServerOptions{}) {
    backend.set_slot_save_path(save_path);
  }
  int port() const { return server.port(); }
};

class Slots : public ::testing::Test {
 protected:
  void SetUp() override { QMM_REQUIRE_STORIES260K(); }
};

std::vector<int32_t> ids(size_t n, uint32_t seed) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>(3 + (seed * 7919u + i * 104729u) % 500u);
  return t;
}

std::vector<int32_t> cat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string body(const std::vector<int32_t>& prompt, bool stream = false) {
  json j{{"prompt", prompt}, {"max_tokens", 12}, {"temperature", 0}, {"ignore_eos", true}, {"stream", stream}};
  if (stream) j["stream_options"] = {{"include_usage", true}};
  return j.dump();
}

TEST_F(Slots, CachedTokensAreReportedAndTheAnswerIsTheSame) {
  Served cached(1, 16 << 20), plain(1, 0);
  const auto sys = ids(200, 1);
  const Reply a = request(cached.port(), "POST", "/v1/completions", body(cat(sys, ids(20, 2))));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.json()["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  ASSERT_EQ(request(cached.port(), "POST", "/v1/completions", body(ids(100, 9))).status, 200);  // the slot forgets sys
  const auto next = cat(sys, ids(30, 3));
  const Reply c = request(cached.port(), "POST", "/v1/completions", body(next));
  ASSERT_EQ(c.status, 200) << c.body;
  EXPECT_EQ(c.json()["usage"]["prompt_tokens_details"]["cached_tokens"], 192);
  EXPECT_EQ(c.json()["usage"]["prompt_tokens"], 230);
  const Reply p = request(plain.port(), "POST", "/v1/completions", body(next));
  EXPECT_EQ(p.json()["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(c.json()["choices"][0]["text"], p.json()["choices"][0]["text"]);
  // Streamed: the usage chunk has it too.
  ASSERT_EQ(request(cached.port(), "POST", "/v1/completions", body(ids(100, 9))).status, 200);
  const Reply s = request(cached.port(), "POST", "/v1/completions", body(cat(sys, ids(10, 4)), true));
  ASSERT_EQ(s.status, 200);
  EXPECT_NE(s.body.find(R"("prompt_tokens_details":{"cached_tokens":192})"), std::string::npos) << s.body;
  const Load l = cached.backend.load();
  EXPECT_EQ(l.prompt_tokens, 220u + 100u + 230u + 100u + 210u);
  EXPECT_EQ(l.cached_prompt_tokens, 192u + 64u + 192u);  // (the second ids(100, 9) finds its first block)
  EXPECT_GT(l.prompt_cache_bytes, 0u);
  EXPECT_LE(l.prompt_cache_bytes, l.prompt_cache_budget);
  EXPECT_EQ(l.prompt_cache_budget, size_t{16} << 20);
}

TEST_F(Slots, GetSlotsShowsEachSlot) {
  Served s(3, 0);
  ASSERT_EQ(request(s.port(), "POST", "/v1/completions", body(ids(40, 1))).status, 200);
  const Reply r = request(s.port(), "GET", "/slots");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 3u);
  size_t cached = 0;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(j[i]["id"], i);
    EXPECT_EQ(j[i]["id_task"], -1);
    EXPECT_EQ(j[i]["n_ctx"], 512);
    EXPECT_EQ(j[i]["is_processing"], false);
    cached += j[i]["n_cached"].get<size_t>();
  }
  EXPECT_EQ(cached, 40u + 11u);
  EXPECT_EQ(request(s.port(), "POST", "/slots", "{}").status, 405);
  EXPECT_EQ(request(s.port(), "GET", "/slots/0?action=save").status, 405);
}

TEST_F(Slots, SaveRestoreErase) {
  const std::string dir = ::testing::TempDir() + "qmm_slots";
  std::filesystem::create_directories(dir);
  Served s(2, 0, dir);
  const auto prompt = ids(120, 5);
  const Reply a = request(s.port(), "POST", "/v1/completions", body(prompt));
  ASSERT_EQ(a.status, 200);
  const json slots = request(s.port(), "GET", "/slots").json();
  const int used = slots[0]["n_cached"] > 0 ? 0 : 1;
  const Reply save = request(s.port(), "POST", "/slots/" + std::to_string(used) + "?action=save", R"({"filename":"one.bin"})");
  ASSERT_EQ(save.status, 200) << save.body;
  EXPECT_EQ(save.json()["n_saved"], 131);
  EXPECT_EQ(save.json()["filename"], "one.bin");
  EXPECT_EQ(save.json()["n_written"], std::filesystem::file_size(dir + "/one.bin"));
  const Reply restore = request(s.port(), "POST", "/slots/" + std::to_string(1 - used) + "?action=restore", R"({"filename":"one.bin"})");
  ASSERT_EQ(restore.status, 200) << restore.body;
  EXPECT_EQ(restore.json()["n_restored"], 131);
  EXPECT_EQ(restore.json()["n_read"], save.json()["n_written"]);
  const Reply erase = request(s.port(), "POST", "/slots/" + std::to_string(used) + "?action=erase");
  ASSERT_EQ(erase.status, 200) << erase.body;
  EXPECT_EQ(erase.json()["n_erased"], 131);
  const json after = request(s.port(), "GET", "/slots").json();
  EXPECT_EQ(after[used]["n_cached"], 0);
  EXPECT_EQ(after[1 - used]["n_cached"], 131);
  // The restored slot answers a continuation from its cache.
  const Reply next = request(s.port(), "POST", "/v1/completions", body(cat(prompt, ids(5, 6))));
  EXPECT_EQ(next.json()["usage"]["prompt_tokens_details"]["cached_tokens"], 120);
}

TEST_F(Slots, HostileNamesAndFilesAreRefused) {
  const std::string dir = ::testing::TempDir() + "qmm_slots_hostile";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/sub");
  Served s(1, 0, dir);
  ASSERT_EQ(request(s.port(), "POST", "/v1/completions", body(ids(70, 1))).status, 200);
  std::filesystem::remove(dir + "/../x.bin");
  for (const char* name : {R"("../x.bin")", R"("sub/x.bin")", R"("..")", R"(".")", R"(".hidden")", R"("")", R"("x\\y")",
                           R"("a\u0001b")", R"("/etc/passwd")", R"(7)", R"(null)", R"(["a"])"}) {
    for (const char* action : {"save", "restore"}) {
      const Reply r = request(s.port(), "POST", std::string("/slots/0?action=") + action, std::string(R"({"filename":)") + name + "}");
      EXPECT_EQ(r.status, 400) << action << " " << name << ": " << r.body;
      EXPECT_EQ(r.json()["error"]["param"], "filename") << r.body;
    }
  }
  const std::string long_name = "{\"filename\":\"" + std::string(300, 'a') + "\"}";
  EXPECT_EQ(request(s.port(), "POST", "/slots/0?action=save", long_name).status, 400);
  EXPECT_EQ(request(s.port(), "POST", "/slots/0?action=save", R"({"filename":"a","path":"/tmp"})").status, 400);
  EXPECT_EQ(request(s.port(), "POST", "/slots/0?action=save", R"({})").status, 400);
  EXPECT_EQ(request(s.port(), "POST", "/slots/0?action=save", "not json").status, 400);
  // Nothing was written: the directory holds only its empty sub-directory, and nothing went beside it.
  EXPECT_EQ(std::distance(std::filesystem::recursive_directory_iterator(dir), {}), 1);
  EXPECT_FALSE(std::filesystem::exists(dir + "/../x.bin"));
  for (const char* id : {"1", "-1", "abc", "99999999999", ""}) {
    EXPECT_EQ(request(s.port(), "POST", std::string("/slots/") + id + "?action=erase").status, 400) << id;
  }
  EXPECT_EQ(request(s.port(), "POST", "/slots/0?action=delete").status, 400);
  EXPECT_EQ(request(s.port(), "POST", "/slots/0").status, 400);
  EXPECT_EQ(request(s.port(), "POST", "/slots/0?action=restore", R"({"filename":"absent.bin"})").status, 404);
  // Files that are not slot files, or truncated ones: 400 with the reason; the slot is empty after.
  ASSERT_EQ(request(s.port(), "POST", "/slots/0?action=save", R"({"filename":"good.bin"})").status, 200);
  std::ifstream in(dir + "/good.bin", std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir + "/short.bin", std::ios::binary) << good.substr(0, good.size() - 100);
  std::ofstream(dir + "/junk.bin", std::ios::binary) << std::string(good.size(), 'x');
  for (const auto& [name, why] : {std::pair{"short.bin", "its header says"}, std::pair{"junk.bin", "not a qmm slot file"}}) {
    const Reply r = request(s.port(), "POST", "/slots/0?action=restore", std::string(R"({"filename":")") + name + "\"}");
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_NE(r.body.find(why), std::string::npos) << r.body;
  }
  EXPECT_EQ(request(s.port(), "GET", "/slots").json()[0]["n_cached"], 0);
  std::filesystem::create_directories(dir + "/adir");
  EXPECT_EQ(request(s.port(), "POST", "/slots/0?action=restore", R"({"filename":"adir"})").status, 400);
}

TEST_F(Slots, SaveAndRestoreNeedASavePath) {
  Served s(1, 0);
  const Reply r = request(s.port(), "POST", "/slots/0?action=save", R"({"filename":"a.bin"})");
  EXPECT_EQ(r.status, 501) << r.body;
  EXPECT_NE(r.body.find("--slot-save-path"), std::string::npos);
  EXPECT_EQ(request(s.port(), "POST", "/slots/0?action=erase").status, 200);
}

// A slot that is generating is a 409 for every action (its cache is changing).
TEST_F(Slots, ABusySlotIsAConflict) {
  const std::string dir = ::testing::TempDir() + "qmm_slots_busy";
  std::filesystem::create_directories(dir);
  Served s(1, 0, dir);
  ASSERT_EQ(request(s.port(), "POST", "/v1/completions", body(ids(20, 1))).status, 200);
  ASSERT_EQ(request(s.port(), "POST", "/slots/0?action=save", R"({"filename":"busy.bin"})").status, 200);
  bool seen = false;
  for (int attempt = 0; attempt < 5 && !seen; ++attempt) {
    std::atomic<bool> done{false};
    std::thread long_request([&] {
      request(s.port(), "POST", "/v1/completions", json{{"prompt", ids(8, 2)}, {"max_tokens", 480}, {"ignore_eos", true}}.dump());
      done = true;
    });
    while (!done && !request(s.port(), "GET", "/slots").json()[0]["is_processing"].get<bool>()) std::this_thread::yield();
    const Reply save = request(s.port(), "POST", "/slots/0?action=save", R"({"filename":"busy.bin"})");
    const Reply restore = request(s.port(), "POST", "/slots/0?action=restore", R"({"filename":"busy.bin"})");
    const Reply erase = request(s.port(), "POST", "/slots/0?action=erase");
    if (save.status == 409 && restore.status == 409 && erase.status == 409) {
      seen = true;
      EXPECT_NE(save.body.find("is processing a request"), std::string::npos) << save.body;
    }
    long_request.join();  // (otherwise it finished first: try again)
  }
  EXPECT_TRUE(seen);
}

// llama-server's request fields: id_slot runs a request in that slot, cache_prompt false
// prefills the whole prompt (neither the slot's nor the prompt cache's prefix is used).
TEST_F(Slots, IdSlotAndCachePrompt) {
  Served s(2, 16 << 20);
  const auto prompt = ids(150, 7);
  auto with = [&](json extra) {
    json j = json::parse(body(prompt));
    j.update(extra);
    return request(s.port(), "POST", "/v1/completions", j.dump());
  };
  const Reply first = with({{"id_slot", 1}});
  ASSERT_EQ(first.status, 200) << first.body;
  const json slots = request(s.port(), "GET", "/slots").json();
  EXPECT_EQ(slots[0]["n_cached"], 0);
  EXPECT_EQ(slots[1]["n_cached"], 161);
  const Reply again = with({{"id_slot", 0}});  // another slot: the prompt cache's blocks
  EXPECT_EQ(again.json()["usage"]["prompt_tokens_details"]["cached_tokens"], 128);
  const Reply fresh = with({{"cache_prompt", false}});
  EXPECT_EQ(fresh.json()["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(fresh.json()["choices"][0]["text"], first.json()["choices"][0]["text"]);
  const Reply bad = with({{"id_slot", 2}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json()["error"]["param"], "id_slot");
}

// /metrics: the cached prompt tokens are the answers' usage, and the prompt cache's bytes stay
// within its budget.
TEST_F(Slots, MetricsCountThePromptCache) {
  ServeMetrics m;
  llm::GeneratorOptions o{1, 512, 48, 8};
  o.cache_bytes = 16 << 20;
  EngineBackend backend(stories().model, stories().tok, stories().ctx, o, std::nullopt, &m);
  test::TestServer server(backend, ServerOptions{}, &m);
  const auto sys = ids(200, 1);
  size_t cached = 0;
  for (const auto& prompt : {cat(sys, ids(20, 2)), ids(100, 9), cat(sys, ids(30, 3))}) {
    const Reply r = request(server.port(), "POST", "/v1/completions", body(prompt));
    ASSERT_EQ(r.status, 200) << r.body;
    cached += r.json()["usage"]["prompt_tokens_details"]["cached_tokens"].get<size_t>();
  }
  EXPECT_EQ(cached, 192u);
  const Reply r = request(server.port(), "GET", "/metrics");
  ASSERT_EQ(r.status, 200) << r.body;
  std::map<std::string, double> v;
  std::string bad;
  ASSERT_TRUE(test::parse_metrics(r.body, v, &bad)) << bad;
  EXPECT_EQ(v.at("qmm:prompt_tokens_cached_total"), 192);
  EXPECT_GT(v.at("qmm:prompt_cache_bytes"), 0);
  EXPECT_LE(v.at("qmm:prompt_cache_bytes"), v.at("qmm:prompt_cache_budget_bytes"));
  EXPECT_EQ(v.at("qmm:prompt_cache_budget_bytes"), 16 << 20);
}

}  // namespace
}  // namespace qmm::serve
