// Helpers of the Arm tests: run one kernel of the list on random data through its own packers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/blocks.h"
#include "core/random.h"
#include "kernels/kernel_list.h"
#include "kernels/ukernel.h"

namespace qmm::armtest {

inline std::vector<float> random_floats(size_t count, uint32_t seed) {
  return qmm::random_floats(count, seed, -2.0f, 2.0f);
}

// GGUF rows [n, k] of `type` from random floats.
inline std::vector<uint8_t> random_weights(WeightType type, size_t n, size_t k, uint32_t seed) {
  const std::vector<float> f = random_floats(n * k, seed);
  std::vector<uint8_t> rows(n * row_bytes(type, k));
  quantize_rows(type, f.data(), rows.data(), n, k);
  return rows;
}

struct Packed {
  std::vector<uint8_t> lhs, rhs;
};

// Packs lhs [m, k] and the weight rows with the kernel's packers at its parameters on this CPU.
inline Packed pack_for(const Ukernel& u, size_t m, size_t n, size_t k, const std::vector<float>& lhs,
                       const std::vector<uint8_t>& rows) {
  const TileParams p = kernel_params(u);
  Packed out;
  out.lhs.assign(lhs_packed_size(u, p, m, k), 0);
  out.rhs.assign(rhs_packed_size(u, p, n, k), 0);
  u.lhs->run(m, k, p.mr, p.kr, p.sr, lhs.data(), k * sizeof(float), out.lhs.data());
  u.rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), out.rhs.data());
  return out;
}

// dst [m, n] (row stride n + 3 floats, padding poisoned with 1e30f) = kernel on the packed data.
inline std::vector<float> run_kernel(const Ukernel& u, size_t m, size_t n, size_t k, const Packed& p, float lo,
                                     float hi) {
  const size_t stride = n + 3;
  std::vector<float> dst(m * stride, 1e30f);
  u.run(m, n, k, p.lhs.data(), p.rhs.data(), dst.data(), stride * sizeof(float), lo, hi);
  return dst;
}

}  // namespace qmm::armtest
