// Helpers of the qmm serve tests: an HttpServer on 127.0.0.1 at a free port, run on its own
// thread, a small HTTP client (cpp-httplib) for plain and streamed (SSE) requests, and
// stories260K loaded once with a server over it.
#pragma once
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "llm/model.h"
#include "qmm/server/engine_backend.h"
#include "qmm/server/http_server.h"
#include "text/tokenizer.h"
#include "../llm/test_models.h"

namespace qmm::serve::test {

class TestServer {
 public:
  TestServer(Backend& backend, ServerOptions opt, ServeMetrics* metrics = nullptr)
      : server_(backend, with_free_port(std::move(opt)), metrics) {
    port_ = server_.bind();
    thread_ = std::thread([this] { server_.run(); });
  }
  ~TestServer() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  HttpServer& http() { return server_; }

 private:
  static ServerOptions with_free_port(ServerOptions o) {
    o.host = "127.0.0.1";
    o.port = 0;
    return o;
  }
  HttpServer server_;
  int port_ = 0;
  std::thread thread_;
};

struct Reply {
  int status = 0;  // 0: no answer (connection error)
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

inline httplib::Client client(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60);
  c.set_connection_timeout(10);
  return c;
}

inline Reply request(int port, const std::string& method, const std::string& path, const std::string& body = {},
                     const std::string& key = {}) {
  httplib::Client c = client(port);
  httplib::Request req;
  req.method = method;
  req.path = path;
  req.body = body;
  if (!body.empty()) req.set_header("Content-Type", "application/json");
  if (!key.empty()) req.set_header("Authorization", "Bearer " + key);
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  if (!c.send(req, res, err)) return {0, "no answer: " + httplib::to_string(err)};
  return {res.status, res.body};
}

// A streamed request: the SSE payloads ("data: X" -> X) in order. `keep_going(n)` is asked
// after each event (n so far); false closes the connection there, as a client that goes away.
struct Stream {
  int status = 0;
  std::vector<std::string> events;
  std::string body;  // everything received (the error body when status != 200)
};

template <class KeepGoing>
Stream stream(int port, const std::string& path, const std::string& body, KeepGoing keep_going) {
  httplib::Client c = client(port);
  Stream s;
  std::string pending;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&s](const httplib::Response& r) {
    s.status = r.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    s.body.append(data, n);
    pending.append(data, n);
    for (size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
      const std::string ev = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (ev.rfind("data: ", 0) == 0) s.events.push_back(ev.substr(6));
      if (!keep_going(s.events.size())) return false;
    }
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  if (!c.send(req, res, err) && s.status == 0) s.body = "no answer: " + httplib::to_string(err);
  if (s.status == 0) s.status = res.status;
  return s;
}

inline Stream stream(int port, const std::string& path, const std::string& body) {
  return stream(port, path, body, [](size_t) { return true; });
}

// The text of a stream's content deltas (chat) or text pieces (completions).
inline std::string streamed_text(const Stream& s) {
  std::string text;
  for (const std::string& e : s.events) {
    const nlohmann::json j = nlohmann::json::parse(e, nullptr, false);
    if (!j.is_object() || !j.contains("choices") || j["choices"].empty()) continue;
    const nlohmann::json& c = j["choices"][0];
    if (c.contains("delta") && c["delta"].contains("content")) text += c["delta"]["content"].get<std::string>();
    if (c.contains("text")) text += c["text"].get<std::string>();
  }
  return text;
}

// Raw sockets, for clients httplib's cannot play (slow, silent, pipelining, malformed).
inline int connect_to(int port) {
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

inline bool send_all(int fd, const std::string& s) {
  return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
}

// What arrives on fd until it closes or `timeout` passes; `closed` tells which.
inline std::string receive(int fd, std::chrono::milliseconds timeout, bool* closed = nullptr) {
  std::string out;
  const auto end = std::chrono::steady_clock::now() + timeout;
  if (closed) *closed = false;
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
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

// A model and its tokenizer on a one-thread context (stories260K unless another path).
struct Stories {
  Context ctx{1};
  llm::Model model;
  llm::Tokenizer tok;
  explicit Stories(const std::string& path = qmm::test::stories260k_path())
      : model(llm::Model::load(path, {}, ctx.pool())), tok(llm::Tokenizer::from_gguf(model.file())) {}
};

// stories260K, loaded once per test binary.
inline Stories& stories() {
  static Stories s;
  return s;
}

// A plain-text chat template ("role: content" lines, then "assistant:").
inline const char* plain_chat_source() { return "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:"; }

// One server over stories260K: an EngineBackend (engine thread) with `opt` and the chat template
// `tmpl`, and the HTTP side, serving the model as "stories260K".
struct ServedStories {
  EngineBackend backend;
  TestServer server;
  explicit ServedStories(const llm::GeneratorOptions& opt, const std::string& tmpl = plain_chat_source())
      : backend(stories().model, stories().tok, stories().ctx, opt, llm::ChatFormat::from_template(stories().tok, tmpl, "test")),
        server(backend, [] {
          ServerOptions o;
          o.model_id = "stories260K";
          return o;
        }()) {}
  int port() const { return server.port(); }
};

}  // namespace qmm::serve::test
