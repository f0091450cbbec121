#include "llm_util.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "verbs.h"

namespace qmm::cli {

MatmulTrace::~MatmulTrace() {
  if (open_) set_matmul_trace(nullptr, nullptr);
}

void MatmulTrace::begin(const char* stage) {
  stage_ = stage;
  entries_.clear();
  start_ = std::chrono::steady_clock::now();
  set_matmul_trace(&MatmulTrace::observe, this);
  open_ = true;
}

void MatmulTrace::observe(void* self, const PackedWeights& w, size_t m, double seconds) {
  auto* t = static_cast<MatmulTrace*>(self);
  const Ukernel& u = w.kernel_for(m);
  for (Entry& e : t->entries_) {
    if (e.kernel == u.name && e.lhs == u.lhs->name && e.m == m && e.n == w.n() && e.k == w.k()) {
      ++e.count;
      e.seconds += seconds;
      return;
    }
  }
  t->entries_.push_back({u.lhs->name, u.name, m, w.n(), w.k(), 1, seconds});
}

// Each distinct matmul with its count, its time and its share of the stage's wall time; the
// rest of the stage (attention, norms, sampling, printing) on the last line.
void MatmulTrace::end() { end(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count()); }

void MatmulTrace::end(double stage) {
  set_matmul_trace(nullptr, nullptr);
  open_ = false;
  double in_matmuls = 0;
  for (const Entry& e : entries_) in_matmuls += e.seconds;
  auto pct = [&](double s) { return stage > 0 ? 100.0 * s / stage : 0.0; };
  std::fprintf(stderr, "trace %s: %zu distinct matmul%s, %.1f ms of the stage's %.1f ms (%.1f %%)\n", stage_, entries_.size(),
               entries_.size() == 1 ? "" : "s", 1e3 * in_matmuls, 1e3 * stage, pct(in_matmuls));
  for (const Entry& e : entries_) {
    std::fprintf(stderr, "  %s -> %s  m=%zu n=%zu k=%zu  x%zu  %.2f ms (%.1f %%)\n", e.lhs, e.kernel, e.m, e.n, e.k, e.count,
                 1e3 * e.seconds, pct(e.seconds));
  }
  const double rest = std::max(0.0, stage - in_matmuls);
  std::fprintf(stderr, "  the rest (attention, norms, activations, sampling, output)  %.2f ms (%.1f %%)\n", 1e3 * rest, pct(rest));
}

ProgressBar::ProgressBar(const char* label) : label_(label), tty_(isatty(STDERR_FILENO) != 0) {}

void ProgressBar::update(size_t done, size_t total) {
  if (!tty_ || total == 0) return;
  const int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
  if (pct == shown_) return;
  shown_ = pct;
  constexpr int kWidth = 40;
  char bar[kWidth + 1];
  const int filled = pct * kWidth / 100;
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '=' : (i == filled ? '>' : ' ');
  bar[kWidth] = '\0';
  std::fprintf(stderr, "\r%s [%s] %3d%%", label_, bar, pct);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (tty_ && shown_ >= 0) std::fprintf(stderr, "\r\033[K");
  shown_ = -1;
}

size_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<size_t>(ru.ru_maxrss) * 1024;  // Linux: KiB
}

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

size_t default_threads(const std::string& model_path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(model_path, ec);
  return !ec && bytes < (16u << 20) ? 1 : std::max(1u, std::thread::hardware_concurrency());
}

const bool kHaveLlm = true;  // llm_off.cpp in a build with -DQMM_BUILD_LLM=OFF

}  // namespace qmm::cli
