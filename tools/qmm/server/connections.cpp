#include "connections.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace qmm::serve {

using Clock = std::chrono::steady_clock;

struct ConnectionServer::Conn {
  explicit Conn(int f) : fd(f), since(Clock::now()) {}
  int fd;
  std::string buf;   // bytes read ahead; the request being parsed starts at `pos`
  size_t pos = 0;
  size_t scanned = 0;          // buf before this holds no end of headers (after pos)
  Clock::time_point since;     // idle since, or the current request's first byte
  Clock::time_point deadline;  // for reads on a worker (the body)
  bool reading = false;        // bytes of a request have arrived (else idle)
  bool registered = false;     // in the poller's epoll set
  bool close_after = false;
  size_t requests = 0;

  // Whether buf holds a request's complete headers (an empty line after pos).
  bool headers_complete() {
    const size_t from = std::max(pos, scanned);
    for (size_t i = from; i < buf.size(); ++i) {
      if (buf[i] == '\n' && ((i >= pos + 1 && buf[i - 1] == '\n') || (i >= pos + 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n'))) {
        return true;
      }
    }
    scanned = buf.size();
    return false;
  }
  void compact() {
    buf.erase(0, pos);
    scanned = scanned > pos ? scanned - pos : 0;
    pos = 0;
  }
};

namespace {

thread_local ConnectionServer::Conn* tl_conn = nullptr;

int wait_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000));
}

// Whether the peer has closed its side (or the connection broke).
bool peer_closed(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL)) return true;
  char b;
  return (p.revents & POLLIN) && ::recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void address(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if ((peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) : ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len)) != 0) {
    return;
  }
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
    port = ntohs(in->sin6_port);
  }
  ip = text;
}

// httplib's view of one request on a connection: reads come from the connection's read-ahead,
// then from the socket until the connection's deadline; writes wait for the client at most
// write_timeout at a time.
class ConnStream final : public httplib::Stream {
 public:
  ConnStream(ConnectionServer::Conn& c, std::chrono::milliseconds write_timeout) : c_(c), write_timeout_(write_timeout) {}
  bool is_readable() const override { return c_.pos < c_.buf.size(); }
  bool is_writable() const override {
    pollfd p{c_.fd, POLLOUT, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & POLLOUT) && !peer_closed(c_.fd);
  }
  ssize_t read(char* ptr, size_t size) override {
    if (c_.pos == c_.buf.size()) {
      c_.buf.clear();
      c_.pos = c_.scanned = 0;
      if (!fill()) return -1;
    }
    const size_t n = std::min(size, c_.buf.size() - c_.pos);
    std::memcpy(ptr, c_.buf.data() + c_.pos, n);
    c_.pos += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    for (size_t done = 0; done < size;) {
      const ssize_t n = ::send(c_.fd, ptr + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p{c_.fd, POLLOUT, 0};
        if (::poll(&p, 1, static_cast<int>(write_timeout_.count())) <= 0) return -1;  // the client takes nothing
      } else {
        return -1;
      }
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(c_.fd, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(c_.fd, false, ip, port); }
  socket_t socket() const override { return c_.fd; }

 private:
  // Appends what the socket has, waiting until the deadline; false at its end or past the deadline.
  bool fill() {
    char tmp[16384];
    while (true) {
      const ssize_t n = ::recv(c_.fd, tmp, sizeof tmp, MSG_DONTWAIT);
      if (n > 0) {
        c_.buf.append(tmp, static_cast<size_t>(n));
        return true;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      if (Clock::now() >= c_.deadline) return false;
      pollfd p{c_.fd, POLLIN, 0};
      ::poll(&p, 1, wait_ms(c_.deadline));
    }
  }
  ConnectionServer::Conn& c_;
  std::chrono::milliseconds write_timeout_;
};

}  // namespace

// httplib's accept loop hands each connection to its task queue: this one adopts it at once.
class InlineQueue : public httplib::TaskQueue {
 public:
  explicit InlineQueue(ConnectionServer& s) : s_(s) { s_.start(); }
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { s_.shutdown(); }

 private:
  ConnectionServer& s_;
};

ConnectionServer::ConnectionServer(ConnectionLimits limits) : limits_(std::move(limits)) {
  new_task_queue = [this] { return new InlineQueue(*this); };
  // What httplib's "Keep-Alive: timeout=…, max=…" response header announces.
  set_keep_alive_timeout(std::max<time_t>(1, static_cast<time_t>(limits_.idle_timeout.count() / 1000)));
  set_keep_alive_max_count(limits_.max_requests);
}

ConnectionServer::~ConnectionServer() { shutdown(); }

bool ConnectionServer::client_gone() { return tl_conn && peer_closed(tl_conn->fd); }

void ConnectionServer::close_after_response() {
  if (tl_conn) tl_conn->close_after = true;
}

void ConnectionServer::start() {
  std::lock_guard lock(mu_);
  if (started_) return;
  started_ = true;
  stopping_ = false;
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev);
  poller_ = std::thread([this] { poll_loop(); });
  for (size_t i = 0; i < std::max<size_t>(1, limits_.threads); ++i) workers_.emplace_back([this] { work_loop(); });
}

void ConnectionServer::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (!started_) return;
    started_ = false;
    stopping_ = true;
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t w = ::write(wake_, &one, sizeof one);
  ready_cv_.notify_all();
  poller_.join();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  for (auto& c : ready_) close_conn(std::move(c));
  ready_.clear();
  for (auto& c : incoming_) close_conn(std::move(c));
  incoming_.clear();
  ::close(epoll_);
  ::close(wake_);
  epoll_ = wake_ = -1;
}

bool ConnectionServer::process_and_close_socket(socket_t sock) {
  ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
  if (stopping_ || open_.load() >= limits_.max_connections) {
    // Too many connections: a 503 right away, then close (reading what already came, so that
    // the close is not a reset that could destroy the answer).
    const std::string& body = limits_.busy_body;
    const std::string r = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + body;
    [[maybe_unused]] const ssize_t n = ::send(sock, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(sock, SHUT_WR);
    char tmp[4096];
    while (::recv(sock, tmp, sizeof tmp, MSG_DONTWAIT) > 0) {
    }
    ::close(sock);
    return true;
  }
  ++open_;
  to_poller(std::make_unique<Conn>(sock));
  return true;
}

void ConnectionServer::to_poller(std::unique_ptr<Conn> c) {
  {
    std::lock_guard lock(mu_);
    incoming_.push_back(std::move(c));
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t w = ::write(wake_, &one, sizeof one);
}

void ConnectionServer::close_conn(std::unique_ptr<Conn> c) {
  if (!c) return;
  ::shutdown(c->fd, SHUT_RDWR);
  ::close(c->fd);
  --open_;
}

void ConnectionServer::poll_loop() {
  std::vector<epoll_event> events(64);
  auto arm = [this](Conn* p) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
    ev.data.ptr = p;
    ::epoll_ctl(epoll_, p->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, p->fd, &ev);
    p->registered = true;
  };
  auto drop = [this](Conn* p) {
    auto it = polled_.find(p);
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, p->fd, nullptr);
    close_conn(std::move(it->second));
    polled_.erase(it);
  };
  while (!stopping_) {
    const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 100);
    std::vector<std::unique_ptr<Conn>> adopted;
    {
      std::lock_guard lock(mu_);
      adopted.swap(incoming_);
    }
    for (auto& c : adopted) {
      Conn* p = c.get();
      polled_[p] = std::move(c);
      arm(p);
    }
    for (int i = 0; i < n; ++i) {
      auto* p = static_cast<Conn*>(events[static_cast<size_t>(i)].data.ptr);
      if (p == nullptr) {  // the wake-up eventfd
        uint64_t v;
        [[maybe_unused]] const ssize_t r = ::read(wake_, &v, sizeof v);
        continue;
      }
      char tmp[16384];
      bool open = true;
      while (true) {
        const ssize_t got = ::recv(p->fd, tmp, sizeof tmp, MSG_DONTWAIT);
        if (got > 0) {
          if (!p->reading) p->since = Clock::now();  // the header deadline starts at the first byte
          p->reading = true;
          p->buf.append(tmp, static_cast<size_t>(got));
          if (p->buf.size() - p->pos > limits_.max_header_bytes) break;
          continue;
        }
        if (got < 0 && errno == EINTR) continue;
        open = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        break;
      }
      if (p->reading && p->headers_complete()) {  // a request to answer (even if the client half-closed)
        ::epoll_ctl(epoll_, EPOLL_CTL_DEL, p->fd, nullptr);
        p->registered = false;
        auto it = polled_.find(p);
        std::unique_ptr<Conn> c = std::move(it->second);
        polled_.erase(it);
        {
          std::lock_guard lock(mu_);
          ready_.push_back(std::move(c));
        }
        ready_cv_.notify_one();
      } else if (!open || p->buf.size() - p->pos > limits_.max_header_bytes) {
        drop(p);
      } else {
        arm(p);
      }
    }
    // Idle connections past the keep-alive timeout, requests whose headers are late.
    const auto now = Clock::now();
    std::vector<Conn*> late;
    for (auto& [p, c] : polled_) {
      if (now - p->since > (p->reading ? limits_.header_timeout : limits_.idle_timeout)) late.push_back(p);
    }
    for (Conn* p : late) drop(p);
  }
  std::vector<Conn*> all;
  for (auto& [p, c] : polled_) all.push_back(p);
  for (Conn* p : all) drop(p);
}

void ConnectionServer::work_loop() {
  while (true) {
    std::unique_ptr<Conn> c;
    {
      std::unique_lock lock(mu_);
      ready_cv_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
      if (stopping_) return;
      c = std::move(ready_.front());
      ready_.pop_front();
    }
    serve(std::move(c));
  }
}

void ConnectionServer::serve(std::unique_ptr<Conn> c) {
  tl_conn = c.get();
  while (true) {
    c->deadline = Clock::now() + limits_.body_timeout;
    c->close_after = false;
    ConnStream strm(*c, limits_.write_timeout);
    bool closed = false;
    const bool last = ++c->requests >= limits_.max_requests || stopping_;
    const bool ok = process_request(strm, last, closed, nullptr);
    if (!ok || closed || last || c->close_after || stopping_) break;
    // Pipelined requests are answered in order: the next one may be complete already.
    c->compact();
    if (c->buf.empty()) c->scanned = 0;
    if (!c->buf.empty() && c->headers_complete()) continue;
    c->reading = !c->buf.empty();
    c->since = Clock::now();
    tl_conn = nullptr;
    to_poller(std::move(c));
    return;
  }
  tl_conn = nullptr;
  close_conn(std::move(c));
}

}  // namespace qmm::serve
