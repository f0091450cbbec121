// The HTTP side of `qmm serve` (cpp-httplib): routes, API-key check, OpenAI-style errors for
// every failure (including httplib's own 404 / 413 / 400), and the answers of a Backend as
// one JSON body or as server-sent events. Connections are held by connections.h (idle and slow
// ones cost no thread); each request runs on one of its workers; generation happens on the
// backend's engine thread, reached through a Job.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <semaphore>
#include <string>
#include <vector>

#include "job.h"

namespace httplib {
class ContentReader;
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace qmm::serve {

struct Load {
  size_t slots = 0, active = 0, queued = 0;
  size_t cancelled = 0;  // requests ended early because their client went away (since start)
  bool loading = false;  // the model is still loading: /health answers 503, as llama-server
};

// What the HTTP side needs from the model side.
class Backend {
 public:
  virtual ~Backend() = default;
  // Queues a validated request. Throws ApiError: 400 when the prompt does not fit a slot's
  // context, 503 when every slot is busy and the queue is full.
  virtual std::shared_ptr<Job> submit(Request r) = 0;
  virtual Load load() const = 0;
  // llama-server's /tokenize and /detokenize (ApiError 400 for an id outside the vocabulary;
  // a backend without a tokenizer answers 501). An embedding is a Request of
  // Endpoint::embedding given to submit(): its Job emits the vector, then finishes.
  virtual std::vector<int32_t> tokenize(const std::string& text, bool add_special) const;
  virtual std::string token_piece(int32_t id) const;  // the bytes of one token
  virtual std::string detokenize(const std::vector<int32_t>& ids) const;
  virtual size_t embedding_size() const { return 0; }  // n_embd (0: no embeddings here)
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                 // 0: any free port (bind() returns it)
  std::string api_key;             // non-empty: every route but /health needs "Authorization: Bearer KEY" or "X-Api-Key: KEY"
  // CORS, as llama-server: "*" allows every origin (its Origin is echoed), a comma-separated
  // list only those, "" none. Preflight OPTIONS requests are answered without the key.
  std::string cors = "*";
  std::string model_id = "qmm";    // what /v1/models lists and responses name
  size_t max_body_bytes = 1 << 20;
  size_t threads = 32;             // HTTP workers: requests read and answered at once (see connections.h)
  size_t max_connections = 512;    // open connections, idle ones included; more get a 503
  std::chrono::milliseconds idle_timeout{5000};     // a keep-alive connection without a request
  std::chrono::milliseconds header_timeout{10000};  // a request's first byte -> the end of its headers
  std::chrono::milliseconds body_timeout{30000};    // the end of its headers -> the end of its body
};

// glibc gives each thread that allocates its own arena, keeps what a request freed there and
// raises its mmap threshold after large frees: with dozens of HTTP threads RSS grew by each
// 1 MiB request until every arena held one (~0.9 GB). Two arenas and a fixed mmap threshold
// (large buffers go back to the system when freed) keep it flat. Process-wide: call at start.
void limit_malloc_retention();

class HttpServer {
 public:
  HttpServer(Backend& backend, ServerOptions opt);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int bind();    // binds host:port, returns the port; throws qmm::Error when it cannot
  void run();    // serves until stop()
  void stop();   // from any thread; in-flight streams are cut, their jobs cancelled
  bool running() const;  // run() is serving (a stop() before it would be lost)

 private:
  void routes();
  // A handler of a route: the key checked (when needs_key), the body read, ApiError answered.
  using BodyHandler = std::function<void(const httplib::Request&, httplib::Response&, const std::string& body)>;
  using RawHandler = std::function<void(const httplib::Request&, httplib::Response&, const httplib::ContentReader&)>;
  using Guard = std::function<RawHandler(bool needs_key, BodyHandler)>;
  void app_routes(const Guard& guarded);  // routes_apps.cpp
  // Waits for each job's end (cancelling them all when the client goes or one fails).
  std::vector<Event> wait_all(const std::vector<std::shared_ptr<Job>>& jobs);
  std::string read_body(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) const;
  void generate(const httplib::Request& req, httplib::Response& res, const std::string& body, Endpoint ep);
  void stream(std::vector<std::shared_ptr<Job>> jobs, const ResponseHead& head, httplib::Response& res);
  bool authorized(const httplib::Request& req) const;
  bool cors_allows(const std::string& origin) const;

  Backend& backend_;
  ServerOptions opt_;
  std::unique_ptr<httplib::Server> svr_;
  std::atomic<uint64_t> next_id_{1};
  std::counting_semaphore<> large_requests_{2};  // requests with large bodies handled at once
  int64_t created_;
  int listen_fd_ = -1;  // the listening socket (its backlog is raised after bind)
};

}  // namespace qmm::serve
