// Shared helpers of the test suite: deterministic data, GGUF rows, skip-with-reason.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/blocks.h"
#include "core/random.h"
#include "core/cpu.h"
#include "kernels/kernel_list.h"
#include "matmul/select.h"
#include "emulated.h"
#include "random_rows.h"

namespace qmm::test {

using qmm::random_floats;

// GGUF rows [n, k] of `type` from random floats in [-1, 1), a few rows scaled up or zero (to
// exercise scales and the all-zero block); blocks drawn from a pool (random_rows.h).
inline std::vector<uint8_t> random_weights(WeightType type, size_t n, size_t k, uint64_t seed,
                                           std::vector<float>* f32 = nullptr) {
  return random_rows(type, n, k, seed, [](size_t i) { return i % 14 == 0 ? 0.0f : i % 7 == 0 ? 40.0f : 1.0f; }, f32);
}

// Dequantized weights (what the kernels multiply by).
inline std::vector<float> dequantized(WeightType type, const std::vector<uint8_t>& rows, size_t n, size_t k) {
  std::vector<float> out(n * k);
  for (size_t i = 0; i < n; ++i) dequantize_row(type, rows.data() + i * row_bytes(type, k), out.data() + i * k, k);
  return out;
}

// Empty when the kernel can run on this CPU, else the reason (for GTEST_SKIP).
inline std::string why_unavailable(const Ukernel& u) { return unavailable_reason(u, cpu_info()); }

}  // namespace qmm::test
