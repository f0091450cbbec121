// Helpers of the Arm tests: run one kernel of the list on random data through its own packers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/blocks.h"
#include "core/random.h"
#include "kernels/kernel_list.h"
#include "kernels/ukernel.h"
#include "../random_rows.h"

namespace qmm::armtest {

inline std::vector<float> random_floats(size_t count, uint32_t seed) {
  return qmm::random_floats(count, seed, -2.0f, 2.0f);
}

// GGUF rows [n, k] of `type` from random floats in [-2, 2) (blocks drawn from a pool: random_rows.h).
inline std::vector<uint8_t> random_weights(WeightType type, size_t n, size_t k, uint32_t seed) {
  return test::random_rows(type, n, k, seed, [](size_t) { return 2.0f; });
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

// The bit-for-bit comparison of kernel u with `other`, another implementation that reads u's
// packed buffers (KleidiAI's kernel of the same name, u's NEON twin): seven cases around u's tile,
// from one row, column and 32-block to several tiles with ragged edges and a long k, with and
// without clamps (GEMVs at m = 1). other(m, n, k, lhs_packed, rhs_packed, dst, dst_stride_row, lo, hi)
// writes dst with a row stride of n + 3 floats. Returns "" when every output has the same bits,
// else where the first one differs.
template <class F>
std::string first_difference(const Ukernel& u, F&& other, uint32_t seed) {
  const TileParams p = kernel_params(u);
  struct Case {
    size_t m, n, k;
    float lo, hi;
  };
  const float inf = __builtin_inff();
  const size_t mr = u.gemv ? 1 : p.mr, one = 1;
  const bool any_k = block_len(u.type) == 1;  // per-channel types: k need not fill a 32-block
  const Case cases[] = {{1, 1, 32, -inf, inf},
                        {mr, p.nr, 64, -inf, inf},
                        {u.gemv ? one : mr + 3, p.nr + 5, 96, -inf, inf},
                        {u.gemv ? one : 2 * mr + 1, 2 * p.nr + 3, any_k ? size_t{200} : 160, -0.5f, 0.75f},
                        {u.gemv ? one : size_t{5}, 3 * p.nr, 512, -inf, 0.25f},
                        {u.gemv ? one : mr - 1, 7, any_k ? size_t{13} : 32, -inf, inf},
                        // k of 33 blocks: the F16-activation Q4_0 GEMM's 32 KiB of F16 weights hold 32
                        // blocks of a panel at SVL 128, 8 at 512: two slices or more at every SVL
                        {u.gemv ? one : 2 * mr + 3, p.nr + 7, 1056, -inf, 1.5f}};
  // The K-quants' k: whole 256-super-blocks (1056 -> 1280: the F16 Q4_K GEMM's 32 KiB hold 16
  // 64-K groups of a panel at SVL 128, 4 at 512: two slices or more at every SVL).
  const size_t bl = block_len(u.type);
  for (Case c : cases) {
    if (bl > 32) c.k = (c.k + bl - 1) / bl * bl;
    const std::vector<float> lhs = random_floats(c.m * c.k, seed++);
    const std::vector<uint8_t> rows = random_weights(u.type, c.n, c.k, seed++);
    const Packed packed = pack_for(u, c.m, c.n, c.k, lhs, rows);
    const std::vector<float> want = run_kernel(u, c.m, c.n, c.k, packed, c.lo, c.hi);
    const size_t stride = c.n + 3;
    std::vector<float> got(c.m * stride, 1e30f);
    other(c.m, c.n, c.k, packed.lhs.data(), packed.rhs.data(), got.data(), stride * sizeof(float), c.lo, c.hi);
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
        return std::string(u.name) + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" +
               std::to_string(c.k) + " at (" + std::to_string(i / stride) + ", " + std::to_string(i % stride) +
               "): " + std::to_string(want[i]) + " vs " + std::to_string(got[i]);
      }
    }
  }
  return "";
}

}  // namespace qmm::armtest
