// The connection layer of qmm serve (issue 22) with raw sockets: slow and idle clients hold no
// worker and are cut at their deadlines while others are answered, a connection cap answers
// 503, pipelined requests are answered in order, ambiguous lengths are refused, and a
// non-streaming request is cancelled when its client goes away. Short timeouts keep it fast.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server_test_util.h"

namespace qmm::serve {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Each job emits max_tokens (default 4) words, one per 20 ms, on its own thread, and stops
// early when cancelled.
class PacedBackend : public Backend {
 public:
  ~PacedBackend() override {
    std::lock_guard l(mu_);
    for (std::thread& t : threads_) t.join();
  }
  std::shared_ptr<Job> submit(Request r) override {
    auto job = std::make_shared<Job>(std::move(r));
    std::lock_guard l(mu_);
    threads_.emplace_back([this, job] {
      const size_t n = job->request().max_tokens.value_or(4);
      size_t i = 0;
      for (; i < n && !job->cancelled(); ++i) {
        std::this_thread::sleep_for(20ms);
        job->emit(i ? " w" : "w");
      }
      if (job->cancelled()) ++cancelled;
      job->finish(Finish::length, {1, i});
    });
    return job;
  }
  Load load() const override { return {1, 0, 0, 0}; }
  std::atomic<int> cancelled{0};

 private:
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

ServerOptions options() {
  ServerOptions o;
  o.model_id = "paced";
  o.threads = 4;
  o.max_connections = 300;
  o.idle_timeout = 500ms;
  o.header_timeout = 800ms;
  o.body_timeout = 800ms;
  return o;
}

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void send_all(int fd, const std::string& s) { ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size())); }

// What arrives on fd until it closes or `timeout` passes; `closed` tells which.
std::string receive(int fd, std::chrono::milliseconds timeout, bool* closed = nullptr) {
  std::string out;
  const auto end = Clock::now() + timeout;
  if (closed) *closed = false;
  while (Clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (::poll(&p, 1, static_cast<int>(std::max<long long>(left, 1))) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      if (closed) *closed = true;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The time /health takes on a fresh connection.
double health_seconds(int port) {
  const auto t0 = Clock::now();
  const test::Reply r = test::request(port, "GET", "/health");
  EXPECT_EQ(r.status, 200) << r.body;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// 40 clients sending their headers a byte at a time (10 times the workers) and 200 silent
// connections: /health answers at once, and both kinds are cut at their deadlines.
TEST(ServeConnections, SlowAndIdleClientsHoldNoWorker) {
  PacedBackend backend;
  test::TestServer server(backend, options());
  std::vector<int> slow, idle;
  for (int i = 0; i < 40; ++i) slow.push_back(connect_to(server.port()));
  for (int i = 0; i < 200; ++i) idle.push_back(connect_to(server.port()));
  const std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  for (size_t b = 0; b < 4; ++b) {
    for (int fd : slow) ::send(fd, head.data() + b, 1, MSG_NOSIGNAL);
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_LT(health_seconds(server.port()), 0.5);
  for (int fd : slow) ::send(fd, "a", 1, MSG_NOSIGNAL);
  const auto t0 = Clock::now();
  bool closed = false;
  receive(slow[0], 3s, &closed);
  EXPECT_TRUE(closed) << "a request whose headers never end is not cut";
  EXPECT_LT(Clock::now() - t0, 1500ms);
  receive(idle.back(), 3s, &closed);
  EXPECT_TRUE(closed) << "an idle connection is not closed";
  EXPECT_LT(health_seconds(server.port()), 0.5);
  for (int fd : slow) ::close(fd);
  for (int fd : idle) ::close(fd);
}

// A body that stops coming is cut at the body deadline; the server answers others meanwhile.
TEST(ServeConnections, StalledBodyIsCut) {
  PacedBackend backend;
  test::TestServer server(backend, options());
  const int fd = connect_to(server.port());
  send_all(fd, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"pro");
  EXPECT_LT(health_seconds(server.port()), 0.5);
  bool closed = false;
  receive(fd, 3s, &closed);
  EXPECT_TRUE(closed);
  ::close(fd);
}

// Past max_connections a new connection gets a 503 with an OpenAI-style body, then others
// are served again once connections close.
TEST(ServeConnections, ConnectionCapAnswers503) {
  PacedBackend backend;
  ServerOptions o = options();
  o.max_connections = 10;
  o.idle_timeout = 5s;
  test::TestServer server(backend, o);
  std::vector<int> held;
  for (int i = 0; i < 10; ++i) held.push_back(connect_to(server.port()));
  std::this_thread::sleep_for(100ms);
  const int extra = connect_to(server.port());
  send_all(extra, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string r = receive(extra, 2s);
  EXPECT_EQ(r.rfind("HTTP/1.1 503", 0), 0u) << r;
  EXPECT_NE(r.find("too many open connections"), std::string::npos) << r;
  ::close(extra);
  for (int fd : held) ::close(fd);
  std::this_thread::sleep_for(300ms);
  EXPECT_LT(health_seconds(server.port()), 0.5);
}

// Ten requests written at once on one connection: ten answers, in order.
TEST(ServeConnections, PipelinedRequestsAnsweredInOrder) {
  PacedBackend backend;
  test::TestServer server(backend, options());
  const int fd = connect_to(server.port());
  std::string all;
  for (int i = 0; i < 10; ++i) all += i % 2 ? "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n" : "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  send_all(fd, all);
  std::string r;
  for (auto end = Clock::now() + 3s; count(r, "HTTP/1.1 200") < 10 && Clock::now() < end;) r += receive(fd, 100ms);
  EXPECT_EQ(count(r, "HTTP/1.1 200"), 10u) << r;
  size_t at = 0;
  for (int i = 0; i < 10; ++i) {
    at = r.find(i % 2 ? "\"object\":\"list\"" : "\"status\":\"ok\"", at);
    ASSERT_NE(at, std::string::npos) << "answer " << i << " out of order:\n" << r;
  }
  ::close(fd);
}

// Two Content-Length headers, or one with Transfer-Encoding, or one that is not a number:
// 400, and the connection is closed (what follows cannot be framed).
TEST(ServeConnections, AmbiguousLengthsAreRefused) {
  PacedBackend backend;
  test::TestServer server(backend, options());
  for (const char* h : {"Content-Length: 2\r\nContent-Length: 30\r\n", "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
                        "Content-Length: -2\r\n", "Content-Length: 2x\r\n"}) {
    const int fd = connect_to(server.port());
    send_all(fd, std::string("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n") + h + "\r\n{}");
    bool closed = false;
    const std::string r = receive(fd, 3s, &closed);
    EXPECT_EQ(r.rfind("HTTP/1.1 400", 0), 0u) << h << r;
    EXPECT_NE(r.find("malformed HTTP request"), std::string::npos) << h << r;
    EXPECT_TRUE(closed) << h;
    ::close(fd);
  }
}

// A client that goes away while its (non-streaming) answer is generated: the job is cancelled.
TEST(ServeConnections, ClientGoneCancelsNonStreamingRequest) {
  PacedBackend backend;
  test::TestServer server(backend, options());
  const int fd = connect_to(server.port());
  const std::string body = R"({"prompt":"hi","max_tokens":200})";
  send_all(fd, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body);
  std::this_thread::sleep_for(200ms);
  ::close(fd);
  const auto end = Clock::now() + 2s;
  while (backend.cancelled == 0 && Clock::now() < end) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(backend.cancelled, 1) << "the job ran on for a client that had gone";
}

}  // namespace
}  // namespace qmm::serve
