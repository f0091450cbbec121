// Pieces shared by `qmm run` and `qmm bench model`: the --trace collector of matmul calls,
// the load progress bar and the peak-memory figure.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "matmul/matmul.h"

namespace qmm::cli {

// Collects the matmuls of one stage (set_matmul_trace) and prints each distinct
// (packer, kernel, m, n, k) once with its count and time, in first-seen order, and the time of
// the stage spent outside the matmuls.
class MatmulTrace {
 public:
  MatmulTrace() = default;
  MatmulTrace(const MatmulTrace&) = delete;  // the installed observer points at this object
  MatmulTrace& operator=(const MatmulTrace&) = delete;
  ~MatmulTrace();                 // uninstalls the observer if a stage is still open (an error left it)
  void begin(const char* stage);  // starts collecting (installs the observer)
  void end();                     // prints the stage and stops collecting
  // The same, with the stage's time given (a benchmark's timed seconds, when the stage's wall
  // time also holds what it does not time, such as bench model's paired read passes).
  void end(double stage_seconds);

 private:
  struct Entry {
    const char* lhs;
    const char* kernel;
    size_t m, n, k, count;
    double seconds;
  };
  static void observe(void* self, const PackedWeights& w, size_t m, double seconds);
  const char* stage_ = "";
  bool open_ = false;  // between begin and end: the observer installed
  std::chrono::steady_clock::time_point start_;
  std::vector<Entry> entries_;
};

// "\r[=====>     ]  45%" on stderr while a model loads, only when stderr is a terminal.
class ProgressBar {
 public:
  explicit ProgressBar(const char* label);
  void update(size_t done, size_t total);
  void finish();  // erases the bar

 private:
  const char* label_;
  bool tty_;
  int shown_ = -1;
};

size_t peak_rss_bytes();  // getrusage maxrss
// Threads when the user gave none (qmm run, chat, bench model): every core, but one for a
// model under 16 MiB, whose matmuls are shorter than waking the other threads.
size_t default_threads(const std::string& model_path);
std::string mib(size_t bytes);

}  // namespace qmm::cli
