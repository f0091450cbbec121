// The connection side of `qmm serve`, under cpp-httplib's request parsing, routing and
// responses. httplib 0.11 gives each connection one pool thread for its whole life (idle
// keep-alive waits included), times out each recv() separately (a client sending a byte every
// few seconds holds its thread forever), queues connections without limit and drops pipelined
// requests (each request reads through a new stream, whose read-ahead is lost). Its connection
// loop is a virtual method meant to be replaced (its SSL server does), so qmm replaces only that:
//  - one poller thread (epoll) holds every connection that is idle or still sending its headers:
//    an idle or slow client costs no thread; headers must be complete within `header_timeout`
//    of the request's first byte, an idle keep-alive connection is closed after `idle_timeout`;
//  - a request whose headers are complete runs on one of `threads` workers (httplib's
//    process_request), which reads its body within `body_timeout`; pipelined requests are
//    answered in order from the same read-ahead buffer;
//  - past `max_connections` open connections a new one gets a 503 and is closed.
// A handler may ask whether its client has gone (client_gone()) while it generates.
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace qmm::serve {

struct ConnectionLimits {
  size_t threads = 32;           // workers: requests read and answered at once
  size_t max_connections = 512;  // open connections; more get a 503
  std::chrono::milliseconds idle_timeout{5000};     // keep-alive wait for the next request
  std::chrono::milliseconds header_timeout{10000};  // first byte of a request -> end of its headers
  std::chrono::milliseconds body_timeout{30000};    // end of the headers -> end of the body
  std::chrono::milliseconds write_timeout{10000};   // each wait for the client to take bytes
  size_t max_header_bytes = 64 << 10;
  size_t max_requests = 1000;  // per connection (then "Connection: close")
  std::string busy_body;       // the JSON of the 503 past max_connections
};

class ConnectionServer : public httplib::Server {
 public:
  explicit ConnectionServer(ConnectionLimits limits);
  ~ConnectionServer() override;
  ConnectionServer(const ConnectionServer&) = delete;
  ConnectionServer& operator=(const ConnectionServer&) = delete;

  // On a worker thread, inside a handler: whether the client of the request being answered
  // closed its connection (false elsewhere).
  static bool client_gone();
  // Inside a handler: close the connection after this response (e.g. a body left unread).
  static void close_after_response();
  size_t open_connections() const { return open_.load(); }

  struct Conn;

 private:
  bool process_and_close_socket(socket_t sock) override;  // called by httplib's accept loop
  void start();
  void shutdown();
  void poll_loop();
  void work_loop();
  void to_poller(std::unique_ptr<Conn> c);
  void close_conn(std::unique_ptr<Conn> c);
  void serve(std::unique_ptr<Conn> c);
  friend class InlineQueue;

  ConnectionLimits limits_;
  std::atomic<size_t> open_{0};
  std::atomic<bool> stopping_{false};
  int epoll_ = -1, wake_ = -1;  // the poller's epoll and eventfd
  std::mutex mu_;
  std::condition_variable ready_cv_;
  std::deque<std::unique_ptr<Conn>> ready_;     // headers complete: for a worker
  std::vector<std::unique_ptr<Conn>> incoming_;  // new or returned: for the poller
  std::unordered_map<Conn*, std::unique_ptr<Conn>> polled_;  // poller thread only
  std::thread poller_;
  std::vector<std::thread> workers_;
  bool started_ = false;
};

}  // namespace qmm::serve
