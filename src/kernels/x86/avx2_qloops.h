// The GEMV loop of the AVX2 quantized kernels (Q4_0, Q8_0 weights; their GEMM loop is
// x86_qloops.h's): the kernels supply only what a 32-block costs. Include only from sources
// compiled with AVX2 flags.
//
// GEMV (qgemv): columns go in groups of kGroup 8-column panels (each activation broadcast serves the group, and
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
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"

namespace qmm::avx2 {
namespace {  // internal linkage: AVX2 and AVX-VNNI files include this with different flags

constexpr size_t kGroup = 4;     // panels per group
constexpr size_t kAhead = 1;     // prefetch distance, in groups

// Prefetches the `bytes` bytes at p into L2, a line at a time.
template <size_t bytes>
inline void prefetch_l2(const uint8_t* p) {
  for (size_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T1);
}

// P column panels of one row (x86 LHS layout, mr = 1): acc[p] = Σ_blocks K::gemv_dot · s_w · s_a,
// and block b of each panel is prefetched at +pf.
template <class K, size_t P>
inline void gemv_panels(const uint8_t* rp, size_t rhs_panel, size_t pf, const uint8_t* lp, size_t blocks, __m256 acc[P]) {
  for (size_t p = 0; p < P; ++p) acc[p] = _mm256_setzero_ps();
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* a = lp + b * x86lhs::kBlockBytes;
    const uint8_t* w = rp + b * K::kRhsBlock;
    for (size_t p = 0; p < P; ++p) prefetch_l2<K::kRhsBlock>(w + p * rhs_panel + pf);
    __m256i s[P];
    K::template gemv_dot<P>(w, rhs_panel, a, s);
    const __m256 sa = broadcast_f32(a + 32);
    for (size_t p = 0; p < P; ++p) {
      const __m256 scale = _mm256_mul_ps(load_f16x8(w + p * rhs_panel + K::kScaleOffset), sa);
      acc[p] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[p]), scale, acc[p]);
    }
  }
}

// dst[0, n) = clamp(x · Wᵀ). K::gemv_dot<P>(w, stride, a, s): the int32 sums of block w of P
// panels (8 columns each, `stride` bytes apart) against the row's LHS block a, zero point
// included; each activation broadcast serves the P panels. (This replaced an LHS layout with
// every 4-byte chunk stored 8 times, read as vpmaddubsw memory operands: with one broadcast per
// 4 panels both run at the same speed, and the row's LHS is 6.6x smaller.)
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
    gemv_panels<K, kGroup>(rp + g * kGroup * rhs_panel, rhs_panel, ahead * kGroup * rhs_panel, lp, blocks, acc);
    for (size_t p = 0; p < kGroup; ++p) store_clamped(dst + (g * kGroup + p) * nr, acc[p], nr, vlo, vhi);
  }
  for (size_t j0 = groups * kGroup * nr; j0 < n; j0 += nr) {
    __m256 acc[1];
    gemv_panels<K, 1>(rp + j0 / nr * rhs_panel, rhs_panel, 0, lp, blocks, acc);
    store_clamped(dst + j0, acc[0], n - j0 < nr ? n - j0 : nr, vlo, vhi);
  }
}

}  // namespace
}  // namespace qmm::avx2
