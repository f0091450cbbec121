// Deterministic pseudo-random data for tests, benchmarks and synthetic inputs: the same seed
// gives the same values on every platform and run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace qmm {

// `count` floats uniform in [lo, hi).
inline std::vector<float> random_floats(size_t count, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace qmm
