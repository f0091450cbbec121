// qmm serve behind a gateway, as processes: two `qmm serve` replicas (stories260K) behind a
// small round-robin proxy written here (as a gateway: a connection failure or a 503 is retried
// on the next replica). One replica is drained with SIGTERM under load: no request is lost,
// the drained one exits 0, and its /metrics, scraped all along, stays well-formed. Hostile:
// SIGTERM storms (a second signal exits at once, never a crash) and SIGTERM at start-up.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "../llm/test_models.h"
#include "metrics_test_util.h"
#include "server_test_util.h"

extern char** environ;

namespace qmm::serve {
namespace {

using nlohmann::json;

#ifdef QMM_CLI
const char* const kQmm = QMM_CLI;
#else
const char* const kQmm = nullptr;
#endif

// One `qmm serve` process on a free port; its output goes to a file.
class Replica {
 public:
  explicit Replica(std::vector<std::string> extra, bool wait_ready = true) {
    log_ = ::testing::TempDir() + "qmm_replica_" + std::to_string(::getpid()) + "_" + std::to_string(next_++) + ".log";
    std::vector<std::string> args = {kQmm, "serve", "-m", qmm::test::stories260k_path(), "--port", "0", "-t", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid_, kQmm, &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    if (!wait_ready) return;
    for (int i = 0; i < 3000 && port_ == 0 && running(); ++i) {  // up to 30 s
      const std::string out = log();
      if (const size_t at = out.find("on http://127.0.0.1:"); at != std::string::npos) port_ = std::atoi(out.c_str() + at + 20);
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~Replica() {
    if (pid_ > 0 && status_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::remove(log_.c_str());
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  bool running() {
    if (status_ >= 0 || pid_ <= 0) return false;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
    return status_ < 0;
  }
  // The wait status once it exits within `timeout`; -1 if it is still running.
  int wait(std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (running() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return status_;
  }
  void signal(int sig) { ::kill(pid_, sig); }

 private:
  static inline std::atomic<int> next_{0};
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
  int status_ = -1;
};

// Round robin over the replicas' ports; a connection failure, or a 503 (draining, a full
// queue), is retried on the next one, as a gateway does.
class Proxy {
 public:
  explicit Proxy(std::vector<int> ports) : ports_(std::move(ports)) {
    svr_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      for (int attempt = 0; attempt < 200; ++attempt) {
        const int port = ports_[next_++ % ports_.size()];
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(60);
        c.set_connection_timeout(2);
        const auto r = c.Post("/v1/completions", req.body, "application/json");
        if (r && r->status != 503) {
          res.status = r->status;
          res.set_content(r->body, "application/json");
          return;
        }
        ++retries;
        if (r) ++retried_503;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      res.status = 502;
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
  }
  ~Proxy() {
    svr_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::atomic<int> retries{0}, retried_503{0};

 private:
  std::vector<int> ports_;
  std::atomic<size_t> next_{0};
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
};

class ServeCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kQmm) GTEST_SKIP() << "the qmm binary is not built here (no QMM_CLI)";
    QMM_REQUIRE_STORIES260K();
  }
};

const std::vector<std::string> kReplicaFlags = {"-np", "2", "-c", "2048", "--metrics", "--shutdown-timeout", "30"};
constexpr size_t kTokens = 600;
const std::string kBody = json{{"prompt", "Once upon a time"}, {"max_tokens", kTokens}, {"ignore_eos", true}}.dump();

TEST_F(ServeCluster, DrainOneReplicaUnderLoadLosesNoRequest) {
  Replica a(kReplicaFlags), b(kReplicaFlags);
  ASSERT_GT(a.port(), 0) << a.log();
  ASSERT_GT(b.port(), 0) << b.log();
  Proxy proxy({a.port(), b.port()});

  std::atomic<bool> stop{false};
  std::atomic<int> sent{0}, good{0};
  std::mutex mu;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int i = 0; i < 6; ++i) {
    clients.emplace_back([&] {
      while (!stop) {
        ++sent;
        const test::Reply r = test::request(proxy.port(), "POST", "/v1/completions", kBody);
        const json j = r.json();
        if (r.status == 200 && j["usage"]["completion_tokens"] == kTokens && j["choices"][0]["finish_reason"] == "length") {
          ++good;
        } else {
          std::lock_guard l(mu);
          failures.push_back(std::to_string(r.status) + " " + r.body.substr(0, 300));
        }
      }
    });
  }
  // A scraper on the replica to be drained, all along: every answer is a well-formed scrape,
  // until its listener closes.
  std::atomic<int> scrapes{0}, draining_seen{0};
  std::string bad_scrape;
  std::thread scraper([&] {
    while (!stop) {
      httplib::Client c("127.0.0.1", a.port());
      c.set_connection_timeout(1);
      const auto r = c.Get("/metrics");
      if (r) {
        std::map<std::string, double> m;
        std::string bad;
        if (r->status != 200 || !test::parse_metrics(r->body, m, &bad) || !m.count("llamacpp:requests_deferred")) {
          std::lock_guard l(mu);
          bad_scrape = std::to_string(r->status) + " " + bad + r->body.substr(0, 200);
        } else {
          ++scrapes;
          if (m["qmm:draining"] == 1) ++draining_seen;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });

  // Until `n` more requests were answered well (at most 2 minutes: a broken server fails, not hangs).
  auto answered = [&](int n) {
    const int target = good + n;
    const auto end = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (good < target && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  answered(10);
  a.signal(SIGTERM);
  const int status = a.wait(std::chrono::seconds(60));
  answered(10);  // B serves on
  stop = true;
  for (std::thread& t : clients) t.join();
  scraper.join();

  EXPECT_TRUE(failures.empty()) << failures.size() << " lost, first: " << failures.front();
  EXPECT_EQ(good, sent);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status << "\n" << a.log();
  EXPECT_EQ(WEXITSTATUS(status), 0) << a.log();
  const std::string log = a.log();
  const size_t at = log.find("draining: ");
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_GT(std::atoi(log.c_str() + at + 10), 0) << "no request was in flight when SIGTERM came: " << log;
  EXPECT_EQ(log.find("shutdown-timeout reached"), std::string::npos) << log;
  EXPECT_TRUE(bad_scrape.empty()) << bad_scrape;
  EXPECT_GT(scrapes, 0);
  EXPECT_GT(draining_seen, 0);
  EXPECT_TRUE(b.running());
  std::printf("%d requests, %d retried by the proxy (%d of them 503s), %d scrapes of the drained replica (%d draining)\n",
              sent.load(), proxy.retries.load(), proxy.retried_503.load(), scrapes.load(), draining_seen.load());
}

// The gateway flags reach the server: --alias names the model, -to/--timeout closes an idle
// keep-alive connection after that many seconds (and says so in Keep-Alive), --metrics serves.
TEST_F(ServeCluster, FlagsReachTheServer) {
  Replica r({"--alias", "tiny", "-to", "1", "--metrics", "--threads-http", "3"});
  ASSERT_GT(r.port(), 0) << r.log();
  const test::Reply models = test::request(r.port(), "GET", "/v1/models");
  EXPECT_EQ(models.json()["data"][0]["id"], "tiny") << models.body;
  EXPECT_EQ(test::request(r.port(), "GET", "/metrics").status, 200);
  const int fd = test::connect_to(r.port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(test::send_all(fd, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  const auto sent = std::chrono::steady_clock::now();
  bool closed = false;
  const std::string got = test::receive(fd, std::chrono::seconds(10), &closed);
  const auto idle = std::chrono::steady_clock::now() - sent;
  ::close(fd);
  EXPECT_NE(got.find("HTTP/1.1 200"), std::string::npos) << got;
  EXPECT_NE(got.find("timeout=1"), std::string::npos) << got;
  EXPECT_TRUE(closed);
  EXPECT_GT(idle, std::chrono::milliseconds(800));
  EXPECT_LT(idle, std::chrono::seconds(4));
}

// Signals in bursts while requests run: the first drains, a burst during the drain exits at
// once (128 + the signal; 0 if the drain was over first); never a crash or a hang.
TEST_F(ServeCluster, SigtermStormExitsAtOnce) {
  for (const int sig : {SIGTERM, SIGINT}) {
    Replica r(kReplicaFlags);
    ASSERT_GT(r.port(), 0) << r.log();
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int i = 0; i < 4; ++i) {
      clients.emplace_back([&] {
        while (!stop) test::request(r.port(), "POST", "/v1/completions", kBody);
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (int i = 0; i < 50; ++i) r.signal(sig);  // (pending signals of one kind may merge into one)
    for (int i = 0; i < 2000 && r.log().find("draining") == std::string::npos && r.running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const auto burst = std::chrono::steady_clock::now();
    for (int i = 0; i < 50; ++i) r.signal(sig);  // while it drains: out at once
    const int status = r.wait(std::chrono::seconds(10));
    EXPECT_LT(std::chrono::steady_clock::now() - burst, std::chrono::seconds(3)) << r.log();
    stop = true;
    for (std::thread& t : clients) t.join();
    ASSERT_TRUE(WIFEXITED(status)) << "status " << status << "\n" << r.log();
    EXPECT_TRUE(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 128 + sig) << WEXITSTATUS(status) << "\n" << r.log();
  }
}

// SIGTERM while the server starts: as soon as it says anything (the model loading or just
// loaded), and as soon as it is ready; a clean exit each time.
TEST_F(ServeCluster, SigtermAtStartExitsCleanly) {
  for (const char* marker : {"context:", "no chat template", "on http://"}) {
    Replica r(kReplicaFlags, false);
    for (int i = 0; i < 3000 && r.log().find(marker) == std::string::npos && r.running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    r.signal(SIGTERM);
    const int status = r.wait(std::chrono::seconds(20));
    ASSERT_TRUE(WIFEXITED(status)) << marker << ": status " << status << "\n" << r.log();
    EXPECT_EQ(WEXITSTATUS(status), 0) << r.log();
  }
}

}  // namespace
}  // namespace qmm::serve
