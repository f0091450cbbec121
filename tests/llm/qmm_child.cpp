#include "qmm_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

namespace qmm::test {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

Child::Child(const std::vector<std::string>& args, const std::string& stdout_path) {
  static std::atomic<int> serial{0};
  const std::string base = "/tmp/qmm_child_" + std::to_string(::getpid()) + "_" + std::to_string(serial++);
  out_path_ = base + ".out";
  err_path_ = base + ".err";
  std::vector<char*> argv;
  std::string exe = QMM_CLI;
  argv.push_back(exe.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  start_ = now();
  pid_ = ::fork();
  if (pid_ == 0) {
    const int out = stdout_path.empty() ? ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600)
                                        : ::open(stdout_path.c_str(), O_WRONLY);
    const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
}

Child::~Child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ::unlink(out_path_.c_str());
  ::unlink(err_path_.c_str());
}

ChildResult Child::wait(double timeout) {
  ChildResult r;
  int status = 0;
  rusage ru{};
  for (;;) {
    const pid_t w = ::wait4(pid_, &status, WNOHANG, &ru);
    if (w == pid_) break;
    if (w < 0) return r;
    if (now() - start_ > timeout) {
      r.timed_out = true;
      ::kill(pid_, SIGKILL);
      ::wait4(pid_, &status, 0, &ru);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  pid_ = -1;
  r.seconds = now() - start_;
  r.max_rss = static_cast<size_t>(ru.ru_maxrss) * 1024;
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = slurp(out_path_);
  r.err = slurp(err_path_);
  return r;
}

}  // namespace qmm::test
