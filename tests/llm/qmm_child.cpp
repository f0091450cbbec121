#include "qmm_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

namespace qmm::test {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A child's peak RSS (wait4's ru_maxrss) includes the memory of the process that forked it
// (Linux records the high-water mark of the pre-exec copy). So children are forked by a
// "zygote" forked at start-up, while this process is still small: it takes requests (stdout,
// stderr, argv) on a socket, answers the child's pid, and reports {pid, status, maxrss} when
// the child ends.
struct Message {
  int32_t kind;  // 0: started, 1: ended
  int32_t pid, status;
  int64_t max_rss;
};

void send_all(int fd, const void* p, size_t n) {
  const auto* b = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, b, n);
    if (w <= 0 && errno != EINTR) ::_exit(3);
    if (w > 0) b += w, n -= static_cast<size_t>(w);
  }
}

bool recv_all(int fd, void* p, size_t n) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, b, n);
    if (r == 0 || (r < 0 && errno != EINTR)) return false;
    if (r > 0) b += r, n -= static_cast<size_t>(r);
  }
  return true;
}

// AddressSanitizer keeps freed memory in quarantine (256 MiB by default): a sanitizer build's
// children get a small one, so their peak RSS measures what qmm holds, not what it freed.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QMM_TEST_ASAN 1
#endif
#endif
void asan_quarantine_off() {
#if defined(__SANITIZE_ADDRESS__) || defined(QMM_TEST_ASAN)
  const char* old = std::getenv("ASAN_OPTIONS");
  const std::string opts = std::string(old ? old : "") + ":quarantine_size_mb=4:thread_local_quarantine_size_kb=64";
  ::setenv("ASAN_OPTIONS", opts.c_str(), 1);
#endif
}

[[noreturn]] void zygote(int sock) {
  for (;;) {
    pollfd p{sock, POLLIN, 0};
    ::poll(&p, 1, 2);
    if (p.revents & (POLLIN | POLLHUP)) {
      uint32_t len = 0;
      if (!recv_all(sock, &len, 4)) ::_exit(0);  // the test process is gone
      std::string req(len, '\0');
      if (!recv_all(sock, req.data(), len)) ::_exit(0);
      std::vector<char*> argv;  // req: stdout \0 stderr \0 exe \0 args... \0
      for (size_t i = 0; i < req.size(); i += std::strlen(req.data() + i) + 1) argv.push_back(req.data() + i);
      argv.push_back(nullptr);
      const pid_t pid = ::fork();
      if (pid == 0) {
        asan_quarantine_off();
        const int out = ::open(argv[0], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int err = ::open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(126);
        ::close(sock);
        ::execv(argv[2], argv.data() + 2);
        ::_exit(127);
      }
      const Message m{0, pid, 0, 0};
      send_all(sock, &m, sizeof m);
    }
    int status = 0;
    rusage ru{};
    for (pid_t pid; (pid = ::wait4(-1, &status, WNOHANG, &ru)) > 0;) {
      const Message m{1, pid, status, static_cast<int64_t>(ru.ru_maxrss) * 1024};
      send_all(sock, &m, sizeof m);
    }
  }
}

class Zygote {
 public:
  Zygote() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(sv[0]);
      zygote(sv[1]);
    }
    ::close(sv[1]);
    sock_ = pid > 0 ? sv[0] : -1;
  }
  ~Zygote() {
    if (sock_ >= 0) ::close(sock_);  // the zygote exits on EOF
  }

  pid_t start(const std::vector<std::string>& argv) {
    if (sock_ < 0) throw std::runtime_error("no zygote process");
    std::string req;
    for (const std::string& a : argv) req.append(a).push_back('\0');
    const auto len = static_cast<uint32_t>(req.size());
    send_all(sock_, &len, 4);
    send_all(sock_, req.data(), req.size());
    for (;;) {
      const Message m = next();
      if (m.kind == 0) return m.pid;
      ended_[m.pid] = m;
    }
  }

  // The end of `pid` if it ended (waits up to `ms` milliseconds for news).
  bool ended(pid_t pid, int ms, Message* out) {
    if (ended_.count(pid) == 0) {
      pollfd p{sock_, POLLIN, 0};
      if (::poll(&p, 1, ms) > 0) {
        const Message m = next();
        ended_[m.pid] = m;
      }
    }
    const auto it = ended_.find(pid);
    if (it == ended_.end()) return false;
    *out = it->second;
    ended_.erase(it);
    return true;
  }

 private:
  Message next() {
    Message m{};
    if (!recv_all(sock_, &m, sizeof m)) throw std::runtime_error("the zygote process died");
    return m;
  }
  int sock_ = -1;
  std::map<pid_t, Message> ended_;
};

Zygote& zygote() {
  static Zygote z;
  return z;
}
const bool kStartedEarly = (zygote(), true);  // at start-up, while this process is small

}  // namespace

Child::Child(const std::vector<std::string>& args, const std::string& stdout_path) {
  (void)kStartedEarly;
  static std::atomic<int> serial{0};
  const std::string base = "/tmp/qmm_child_" + std::to_string(::getpid()) + "_" + std::to_string(serial++);
  out_path_ = stdout_path.empty() ? base + ".out" : stdout_path;
  err_path_ = base + ".err";
  std::vector<std::string> argv{out_path_, err_path_, QMM_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  start_ = now();
  pid_ = zygote().start(argv);
  keep_out_ = !stdout_path.empty();
}

Child::~Child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    Message m;
    while (!zygote().ended(pid_, 100, &m)) {
    }
  }
  if (!keep_out_) ::unlink(out_path_.c_str());
  ::unlink(err_path_.c_str());
}

ChildResult Child::wait(double timeout) {
  ChildResult r;
  Message m{};
  while (!zygote().ended(pid_, 2, &m)) {
    if (!r.timed_out && now() - start_ > timeout) {
      r.timed_out = true;
      ::kill(pid_, SIGKILL);
    }
  }
  pid_ = -1;
  r.seconds = now() - start_;
  r.max_rss = static_cast<size_t>(m.max_rss);
  if (WIFEXITED(m.status)) r.code = WEXITSTATUS(m.status);
  if (WIFSIGNALED(m.status)) r.signal = WTERMSIG(m.status);
  if (!keep_out_) r.out = slurp(out_path_);
  r.err = slurp(err_path_);
  return r;
}

}  // namespace qmm::test
