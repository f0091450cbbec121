// Attention against a plain double-precision reference: 1..8 query heads sharing a K/V head
// (the 4-, 3-, 2- and 1-head paths and their mixes), head sizes at and off the 8-float vectors
// and the 64-column passes, cache prefixes and query rows at and off the 8-key passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/random.h"
#include "llm/ops.h"
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace qmm::llm {
namespace {

// out[r][h] by the definition, from the same strided buffers attend_heads reads.
std::vector<double> reference(const std::vector<float>& q, size_t q_stride, size_t heads, const std::vector<float>& k,
                              const std::vector<float>& v, size_t kv_stride, size_t hd, size_t pos0, size_t rows,
                              float scale) {
  std::vector<double> out(rows * heads * hd);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t h = 0; h < heads; ++h) {
      const size_t len = pos0 + r + 1;
      std::vector<double> s(len);
      double mx = -INFINITY, sum = 0;
      for (size_t p = 0; p < len; ++p) {
        double d = 0;
        for (size_t i = 0; i < hd; ++i) d += double{q[r * q_stride + h * hd + i]} * k[p * kv_stride + i];
        s[p] = d * scale;
        mx = std::max(mx, s[p]);
      }
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (size_t i = 0; i < hd; ++i) {
        double o = 0;
        for (size_t p = 0; p < len; ++p) o += s[p] * v[p * kv_stride + i];
        out[(r * heads + h) * hd + i] = o / sum;
      }
    }
  }
  return out;
}

TEST(Attention, MatchesTheDefinition) {
  for (size_t heads : {1, 2, 3, 4, 5, 8}) {
    for (size_t hd : {4, 8, 12, 24, 64, 80, 128}) {
      for (auto [pos0, rows] : {std::pair<size_t, size_t>{0, 1}, {0, 9}, {5, 3}, {37, 17}, {100, 1}}) {
        const size_t q_stride = heads * hd + 3, kv_stride = hd + 5, out_stride = heads * hd + 1;
        const size_t len = pos0 + rows;
        const auto q = random_floats(rows * q_stride, 1), k = random_floats(len * kv_stride, 2),
                   v = random_floats(len * kv_stride, 3);
        std::vector<float> att(4 * len), out(rows * out_stride, -7.0f);
        const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
        attend_heads(q.data(), q_stride, heads, k.data(), v.data(), kv_stride, hd, pos0, rows, scale, att.data(), out.data(),
                     out_stride);
        const auto want = reference(q, q_stride, heads, k, v, kv_stride, hd, pos0, rows, scale);
        for (size_t r = 0; r < rows; ++r) {
          for (size_t i = 0; i < heads * hd; ++i) {
            ASSERT_NEAR(out[r * out_stride + i], want[r * heads * hd + i], 1e-5)
                << "heads " << heads << " hd " << hd << " pos0 " << pos0 << " row " << r << " index " << i;
          }
          EXPECT_EQ(out[r * out_stride + heads * hd], -7.0f) << "wrote past the row";  // out_stride = heads·hd + 1
        }
      }
    }
  }
}

// A sliding window's ring: the positions from slot `start` on, wrapping to slot 0, give the
// bits of the same positions laid out in order (head sizes that are multiples of 8; the others
// take attend_plain, which sums the same way wherever the ring wraps too).
TEST(Attention, RingOfSlotsEqualsTheUnwrappedPositions) {
  for (size_t heads : {1, 3, 4}) {
    for (size_t hd : {12, 32, 96}) {
      for (auto [slots, len] : {std::pair<size_t, size_t>{8, 8}, {10, 8}, {23, 20}}) {
        for (size_t start = 0; start < slots; ++start) {
          const size_t kv_stride = hd + 1, out_stride = heads * hd;
          const auto q = random_floats(heads * hd, 1), k = random_floats(slots * kv_stride, 2),
                     v = random_floats(slots * kv_stride, 3);
          std::vector<float> k_lin(len * kv_stride), v_lin(len * kv_stride);
          for (size_t p = 0; p < len; ++p) {
            const size_t at = (start + p) % slots * kv_stride;
            std::copy_n(k.begin() + static_cast<ptrdiff_t>(at), kv_stride, k_lin.begin() + static_cast<ptrdiff_t>(p * kv_stride));
            std::copy_n(v.begin() + static_cast<ptrdiff_t>(at), kv_stride, v_lin.begin() + static_cast<ptrdiff_t>(p * kv_stride));
          }
          std::vector<float> att(4 * len), ring(out_stride), lin(out_stride);
          attend_heads(q.data(), 0, heads, k.data(), v.data(), kv_stride, hd, len - 1, 1, 0.3f, att.data(), ring.data(), out_stride,
                       0.0f, KvRing{start, slots});
          attend_heads(q.data(), 0, heads, k_lin.data(), v_lin.data(), kv_stride, hd, len - 1, 1, 0.3f, att.data(), lin.data(),
                       out_stride);
          ASSERT_EQ(ring, lin) << "heads " << heads << " hd " << hd << " slots " << slots << " start " << start;
        }
      }
    }
  }
}

// Positions whose weight e^(s − m) is tiny times values below 1 make subnormal sums, each
// operation on which costs a microcode assist on x86: the F32 cache's attention flushes them to
// zero as the attention kernels do (ops.h), for the 1-, 2-, 3- and 4-head paths, and leaves the
// caller's floating-point mode as it found it. Eight positions score −100 with values 0.5, the
// ninth 0 with a zero value: the exact output, 0.5·8e^−100 / (1 + 8e^−100) ≈ 2e−44, is a
// subnormal the flush makes exactly 0 (without it the result would be a nonzero subnormal).
TEST(Attention, SubnormalSumsAreFlushedToZero) {
#if defined(__SSE__)
  for (size_t heads : {1, 2, 3, 4}) {
    const size_t hd = 64, len = 9;
    std::vector<float> q(heads * hd, 0.0f), k(len * hd, 0.0f), v(len * hd, 0.5f), att(4 * len), out(heads * hd, -7.0f);
    for (size_t h = 0; h < heads; ++h) q[h * hd] = 100.0f;
    for (size_t p = 0; p + 1 < len; ++p) k[p * hd] = -1.0f;
    std::fill(v.end() - static_cast<ptrdiff_t>(hd), v.end(), 0.0f);
    const unsigned mode = _mm_getcsr();
    attend_heads(q.data(), 0, heads, k.data(), v.data(), hd, hd, len - 1, 1, 1.0f, att.data(), out.data(), hd);
    EXPECT_EQ(_mm_getcsr(), mode) << "heads " << heads;
    const auto want = reference(q, 0, heads, k, v, hd, hd, len - 1, 1, 1.0f);
    for (size_t i = 0; i < heads * hd; ++i) {
      ASSERT_NEAR(out[i], want[i], 1e-30) << "heads " << heads << " index " << i;
      ASSERT_EQ(out[i], 0.0f) << "heads " << heads << " index " << i << ": a subnormal sum was kept";
    }
  }
#else
  GTEST_SKIP() << "flushing is x86's (MXCSR); other CPUs take subnormals at full speed";
#endif
}

}  // namespace
}  // namespace qmm::llm
