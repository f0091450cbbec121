// The GEMV loop shared by the AVX-VNNI Q4_0 and Q8_0 kernels (BLIS style: the kernels
// differ only in their per-block dot product; their GEMM loop is avx2_qloops.h's qgemm).
// Included only by AVX-VNNI kernel files, which are compiled with that ISA's flags.
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
      const __m256 scale = _mm256_mul_ps(avx2::load_f16x8(w + Block::kScaleOffset), avx2::broadcast_f32(a + 32));
      acc[p] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[0]), scale, acc[p]);
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
