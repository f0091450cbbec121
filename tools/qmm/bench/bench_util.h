// Shared pieces of the benchmark verbs: timing, random data, result printing.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace qmm::cli {

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of the whole process (all threads), seconds.
inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The median of v (v non-empty).
inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// A paired ratio (a plain read of the weights' bytes ÷ the kernel's time over the same bytes)
// above 1 says the kernel beat a plain read of its own weights: they came from cache (a model
// or copies small enough to stay there), or the machine's load changed between the two halves
// of the pairs. Either way it is no bandwidth result, and it is reported as a problem instead.
inline bool paired_plausible(double ratio) { return ratio <= 1.0; }
constexpr const char* kPairedProblem =
    "above 100%: faster than a plain read of the same bytes, so the weights came from cache or the load changed; "
    "not a DRAM result";

// Calls f() repeatedly for at least `min_time` seconds and `min_reps` calls; returns the
// median seconds per call, as read from `clock`.
template <class F>
double time_median(F&& f, double min_time, int min_reps = 3, double (*clock)() = now_seconds) {
  std::vector<double> t;
  const double start = now_seconds();
  while (static_cast<int>(t.size()) < min_reps || now_seconds() - start < min_time) {
    const double t0 = clock();
    f();
    t.push_back(clock() - t0);
    if (t.size() >= 100000) break;
  }
  return median(t);
}

}  // namespace qmm::cli
