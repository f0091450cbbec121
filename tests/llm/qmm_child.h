// Runs the qmm command line (the qmm_cli target, QMM_CLI) as a child process with its output
// captured, a time limit, and the child's own peak memory (wait4's rusage, taken by a small
// helper process forked at start-up: see qmm_child.cpp), for the tests of hostile files and
// of safe writes.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace qmm::test {

struct ChildResult {
  int code = -1;          // exit code, -1 if killed by a signal
  int signal = 0;         // the signal that ended it, 0 if it exited
  bool timed_out = false;
  std::string out, err;   // stdout, stderr
  size_t max_rss = 0;     // bytes
  double seconds = 0;
};

class Child {
 public:
  // Starts `qmm args...` (stdout and stderr to temporary files, or stdout to `stdout_path`).
  explicit Child(const std::vector<std::string>& args, const std::string& stdout_path = "");
  ~Child();  // kills it if still running
  pid_t pid() const { return pid_; }
  // Waits up to `timeout` seconds (then kills it with SIGKILL: timed_out).
  ChildResult wait(double timeout);

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
  bool keep_out_ = false;  // stdout went to the caller's path
  double start_ = 0;
};

inline ChildResult run_qmm(const std::vector<std::string>& args, double timeout = 5) { return Child(args).wait(timeout); }

}  // namespace qmm::test
