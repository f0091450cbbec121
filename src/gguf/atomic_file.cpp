#include "gguf/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <random>

#include "core/error.h"

namespace qmm {
namespace {

constexpr size_t kBuffer = 1 << 20;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The one temporary the signal handler removes (the CLI writes one file at a time; a second
// concurrent AtomicFile is simply not covered by the handler).
std::atomic<bool> g_armed{false};
char g_tmp[4096];
struct sigaction g_old[std::size(kSignals)];
bool g_installed[std::size(kSignals)];

void on_signal(int sig) {
  if (g_armed.exchange(false)) ::unlink(g_tmp);
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    if (kSignals[i] == sig) ::sigaction(sig, &g_old[i], nullptr);
  }
  ::raise(sig);  // the previous disposition (by default: terminate) now applies
}

// Signals that remove the temporary are blocked while it is created and recorded.
class BlockSignals {
 public:
  BlockSignals() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : kSignals) sigaddset(&s, sig);
    pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~BlockSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

bool arm(const std::string& tmp) {
  if (tmp.size() >= sizeof g_tmp || g_armed.load()) return false;
  std::memcpy(g_tmp, tmp.c_str(), tmp.size() + 1);
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    struct sigaction old {};
    ::sigaction(kSignals[i], nullptr, &old);
    g_installed[i] = old.sa_handler != SIG_IGN;  // an ignored signal stays ignored
    if (!g_installed[i]) continue;
    g_old[i] = old;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(kSignals[i], &sa, nullptr);
  }
  g_armed = true;
  return true;
}

void disarm() {  // with the signals blocked
  if (!g_armed.exchange(false)) return;
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    if (g_installed[i]) ::sigaction(kSignals[i], &g_old[i], nullptr);
  }
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

}  // namespace

AtomicFile::AtomicFile(const std::string& path, const WriteOptions& opt) : path_(path), replace_(opt.replace) {
  auto refuse = [&](const std::string& why) { fail(Status::io, path + ": " + why); };
  if (path.empty()) fail(Status::invalid_argument, "the output file name is empty");
  struct stat out {}, ln {};
  const bool exists = ::stat(path.c_str(), &out) == 0;
  for (const std::string& in : opt.inputs) {
    struct stat st {};
    if (exists && ::stat(in.c_str(), &st) == 0 && same_file(st, out)) {
      refuse("is the input file " + in + " (write to another name)");
    }
  }
  if (exists && S_ISCHR(out.st_mode)) {  // /dev/null, /dev/full: written in place
    direct_ = true;
    tmp_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) io_error("cannot open", errno);
    return;
  }
  if (exists && S_ISDIR(out.st_mode)) refuse("is a directory");
  if (exists && !S_ISREG(out.st_mode)) refuse("exists and is not a regular file");
  if (!replace_ && (exists || ::lstat(path.c_str(), &ln) == 0)) refuse("exists (use --force to replace it)");

  // Preferably an unnamed file in OUT's directory (O_TMPFILE): no signal, not even SIGKILL,
  // can leave it behind, and it gets a name only once it is complete. Where the file system
  // or /proc lacks it, a fresh, unique named temporary that a signal handler removes.
  const std::string dir = dir_of(path);
  if (::access("/proc/self/fd", X_OK) == 0) {
    fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd_ >= 0) return;
  }
  BlockSignals block;
  fd_ = create_unique(dir, [&](const std::string& name) {
    tmp_ = name;
    return ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  });
  armed_ = arm(tmp_);
}

// Calls create(name) with fresh names ".OUT.<random>.tmp" next to OUT until one is not taken;
// returns what create returned (an error names the directory).
int AtomicFile::create_unique(const std::string& dir, const std::function<int(const std::string&)>& create) {
  const std::string base = path_.substr(path_.find_last_of('/') + 1);
  std::random_device rd;
  for (int attempt = 0;; ++attempt) {
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, ".%08x%04x.tmp", rd(), static_cast<unsigned>(::getpid()) & 0xffff);
    const int r = create(dir + "/." + base + suffix);
    if (r >= 0 || errno != EEXIST || attempt == 100) {
      if (r < 0) {
        const int err = errno;
        tmp_.clear();
        fail(Status::io, path_ + ": cannot create a file in " + dir + ": " + std::strerror(err));
      }
      return r;
    }
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (!direct_ && !tmp_.empty()) {
    BlockSignals block;
    if (armed_) disarm();
    ::unlink(tmp_.c_str());
  }
}

void AtomicFile::io_error(const char* what, int err) {
  fail(Status::io, path_ + ": " + what + ": " + std::strerror(err));
}

void AtomicFile::write_fd(const uint8_t* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) io_error("write failed", w < 0 ? errno : EIO);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void AtomicFile::flush() {
  write_fd(buf_.data(), buf_.size());
  buf_.clear();
}

void AtomicFile::write(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  pos_ += n;
  if (buf_.size() + n <= kBuffer) {
    if (buf_.capacity() < kBuffer) buf_.reserve(kBuffer);
    buf_.insert(buf_.end(), b, b + n);
    return;
  }
  flush();
  write_fd(b, n);
}

void AtomicFile::commit() {
  flush();
  if (direct_) {
    const int err = ::close(fd_) == 0 ? 0 : errno;
    fd_ = -1;
    if (err) io_error("write failed", err);
    return;
  }
  if (::fsync(fd_) != 0 && errno != EINVAL) io_error("write failed", errno);
  const int fd = fd_;
  fd_ = -1;
  BlockSignals block;  // until the temporary is renamed or removed and the handler disarmed
  if (armed_) disarm();
  armed_ = false;
  if (tmp_.empty()) {  // the unnamed file: link it in place, or under a temporary name to rename
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    auto link_as = [&](const std::string& name) { return ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW); };
    const int rc = replace_ ? create_unique(dir_of(path_), [&](const std::string& name) {
      tmp_ = name;
      return link_as(name);
    })
                            : link_as(path_);
    const int err = errno;
    ::close(fd);
    if (!replace_ && rc != 0) {
      if (err == EEXIST) fail(Status::io, path_ + ": exists (created meanwhile; use --force to replace it)");
      io_error("cannot link the new file into place", err);
    }
    if (!replace_) return sync_dir();
  } else if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    io_error("write failed", err);
  }
  int rc = 0;
  if (replace_) {
    rc = ::rename(tmp_.c_str(), path_.c_str());
  } else {
    rc = ::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {  // a file system without it: link() never replaces
      rc = ::link(tmp_.c_str(), path_.c_str());
      if (rc == 0) ::unlink(tmp_.c_str());
    }
  }
  if (rc != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    if (err == EEXIST) fail(Status::io, path_ + ": exists (created meanwhile; use --force to replace it)");
    io_error("cannot rename the temporary file into place", err);
  }
  sync_dir();
}

void AtomicFile::sync_dir() const {
  const int dir = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);  // best effort: the file itself is complete and in place
    ::close(dir);
  }
}

}  // namespace qmm
