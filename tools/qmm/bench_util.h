// Shared pieces of the benchmark verbs: timing, random data, result printing.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qmm::cli {

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Calls f() repeatedly for at least `min_time` seconds and `min_reps` calls; returns the
// median seconds per call.
template <class F>
double time_median(F&& f, double min_time, int min_reps = 3) {
  std::vector<double> t;
  const double start = now_seconds();
  while (static_cast<int>(t.size()) < min_reps || now_seconds() - start < min_time) {
    const double t0 = now_seconds();
    f();
    t.push_back(now_seconds() - t0);
    if (t.size() >= 100000) break;
  }
  std::vector<double> s = t;
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
  return s[s.size() / 2];
}

// Deterministic pseudo-random floats in [-1, 1).
std::vector<float> random_floats(size_t count, uint64_t seed);

}  // namespace qmm::cli
