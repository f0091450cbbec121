// The column loop shared by the AVX2 quantized GEMVs (Q4_0, Q8_0 weights; LHS in the b8
// layout). Include only from sources compiled with AVX2 flags.
//
// Columns go in groups of kGroup 8-column panels (one activation load serves the group, and
// its panels are kGroup concurrent read streams), the rest one panel at a time. While a group
// streams, its kernel prefetches into L2 the same blocks of the next group (kAhead groups
// on), so DRAM reads run ahead across group boundaries: the hardware prefetcher stops at the
// end of each panel and restarts on the next one, which cost 10-25% of the DRAM bandwidth at
// k = 2048 (docs/performance.md; 2 or 3 groups ahead, T0 / NTA hints, and prefetches within
// the panel were measured worse). The prefetch stays inside the call's own columns (under
// threads, another thread owns the next ones).
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/x86/avx2_util.h"

namespace qmm::avx2 {

constexpr size_t kGroup = 4;     // panels per group
constexpr size_t kAhead = 1;     // prefetch distance, in groups

// Prefetches the `bytes` bytes at p into L2, a line at a time.
template <size_t bytes>
inline void prefetch_l2(const uint8_t* p) {
  for (size_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T1);
}

// dst[0, n) = clamp(x · Wᵀ) with K::panels<P>(rp, rhs_panel, pf, lp, blocks, acc), which
// computes P panels from rp into acc[P] and prefetches block b of each at rp + pf.
template <class K>
void qgemv(size_t n, size_t k, const void* lhs, const void* rhs, float* dst, float lo, float hi) {
  constexpr size_t nr = 8;
  const size_t blocks = k / 32, rhs_panel = blocks * K::kRhsBlock;
  const auto* lp = static_cast<const uint8_t*>(lhs);
  const auto* rp = static_cast<const uint8_t*>(rhs);
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const size_t groups = n / (kGroup * nr);
  for (size_t g = 0; g < groups; ++g) {
    const size_t ahead = g + kAhead < groups ? kAhead : groups - 1 - g;  // 0: re-touches its own lines
    __m256 acc[kGroup];
    K::template panels<kGroup>(rp + g * kGroup * rhs_panel, rhs_panel, ahead * kGroup * rhs_panel, lp, blocks, acc);
    for (size_t p = 0; p < kGroup; ++p) store_clamped(dst + (g * kGroup + p) * nr, acc[p], nr, vlo, vhi);
  }
  for (size_t j0 = groups * kGroup * nr; j0 < n; j0 += nr) {
    __m256 acc[1];
    K::template panels<1>(rp + j0 / nr * rhs_panel, rhs_panel, 0, lp, blocks, acc);
    store_clamped(dst + j0, acc[0], n - j0 < nr ? n - j0 : nr, vlo, vhi);
  }
}

}  // namespace qmm::avx2
