// The tile loops shared by the AVX-VNNI Q4_0 and Q8_0 kernels (BLIS style: the kernels
// differ only in their per-block dot product). Included only by AVX-VNNI kernel files,
// which are compiled with that ISA's flags.
//
// Block provides kNr (columns per panel), kRhsBlock (bytes per block in an RHS panel),
// kScaleOffset (where the block's nr f16 scales start) and
//   template <size_t R> static void dot(const uint8_t* w, const uint8_t* a, __m256i s[R]):
// the int32 block sums of R rows, the zero point folded in through the LHS block sums.
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "core/blocks.h"
#include "kernels/x86/avx2_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"

namespace qmm::avxvnni_loops {

// acc += s · (s_rhs · s_lhs[r]): the block's scales, applied once per block.
template <size_t R>
inline __m256 block_finish(__m256 acc, __m256i s, __m256 sw, const uint8_t* a, size_t r) {
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(sw, avx2::broadcast_f32(a + 32 * R + 4 * r)), acc);
}

// GEMM: R-row LHS panels x kNr-column RHS panels, F32 accumulators per row across blocks.
template <class Block, size_t R>
void gemm_loop(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
               float hi) {
  constexpr size_t kNr = Block::kNr;
  const size_t blocks = k / kBlock;
  const size_t lhs_panel = x86lhs::panel_bytes(R, k), rhs_panel = blocks * Block::kRhsBlock;
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (size_t j0 = 0; j0 < n; j0 += kNr) {
    const uint8_t* rp = static_cast<const uint8_t*>(rhs) + j0 / kNr * rhs_panel;
    const size_t cols = n - j0 < kNr ? n - j0 : kNr;
    for (size_t i0 = 0; i0 < m; i0 += R) {
      const uint8_t* lp = static_cast<const uint8_t*>(lhs) + i0 / R * lhs_panel;
      __m256 acc[R];
      for (size_t r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* w = rp + b * Block::kRhsBlock;
        const uint8_t* a = lp + b * R * x86lhs::kBlockBytes;
        __m256i s[R];
        Block::template dot<R>(w, a, s);
        const __m256 sw = avx2::load_f16x8(w + Block::kScaleOffset);
        for (size_t r = 0; r < R; ++r) acc[r] = block_finish<R>(acc[r], s[r], sw, a, r);
      }
      for (size_t r = 0; r < R && i0 + r < m; ++r) {
        avx2::store_clamped(avx2::row_ptr(dst, stride, i0 + r) + j0, acc[r], cols, vlo, vhi);
      }
    }
  }
}

// GEMV: P RHS panels at once, so P weight streams are in flight.
template <class Block, size_t P>
inline void gemv_panels(const uint8_t* rp, size_t rhs_panel, const uint8_t* lp, size_t blocks, __m256 acc[P]) {
  for (size_t p = 0; p < P; ++p) acc[p] = _mm256_setzero_ps();
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* a = lp + b * x86lhs::kBlockBytes;
    for (size_t p = 0; p < P; ++p) {
      const uint8_t* w = rp + p * rhs_panel + b * Block::kRhsBlock;
      __m256i s[1];
      Block::template dot<1>(w, a, s);
      acc[p] = block_finish<1>(acc[p], s[0], avx2::load_f16x8(w + Block::kScaleOffset), a, 0);
    }
  }
}

template <class Block>
void gemv_loop(size_t n, size_t k, const void* lhs, const void* rhs, float* dst, float lo, float hi) {
  constexpr size_t kNr = Block::kNr;
  const size_t blocks = k / kBlock, rhs_panel = blocks * Block::kRhsBlock;
  const auto* lp = static_cast<const uint8_t*>(lhs);
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  size_t j0 = 0;
  for (; j0 + 2 * kNr <= n; j0 += 2 * kNr) {
    __m256 acc[2];
    gemv_panels<Block, 2>(static_cast<const uint8_t*>(rhs) + j0 / kNr * rhs_panel, rhs_panel, lp, blocks, acc);
    avx2::store_clamped(dst + j0, acc[0], kNr, vlo, vhi);
    avx2::store_clamped(dst + j0 + kNr, acc[1], kNr, vlo, vhi);
  }
  for (; j0 < n; j0 += kNr) {
    __m256 acc[1];
    gemv_panels<Block, 1>(static_cast<const uint8_t*>(rhs) + j0 / kNr * rhs_panel, rhs_panel, lp, blocks, acc);
    avx2::store_clamped(dst + j0, acc[0], n - j0 < kNr ? n - j0 : kNr, vlo, vhi);
  }
}

}  // namespace qmm::avxvnni_loops
