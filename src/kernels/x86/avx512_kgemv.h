// The AVX-512 GEMVs' part of the K-quant GEMV steps (x86_kgemv.h): Q6_K's zero points with
// vpdpbusd zmm. Include only from sources compiled with AVX-512 VNNI flags.
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/x86/avx512_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kgemv.h"

namespace qmm::x86q {
namespace {

// Q6_K's zero points of one LHS row's super-block (8 blocks from a): z[16·(2H + g) + 4·b] =
// −32·Σ of the 16 activations of half H of block 4g + b. Each 128-bit lane of a vector holds one
// half (four inserts), vpdpbusd by 32 sums its bytes by four, two shuffles across the lane
// (about 40 instructions per super-block for all the tile's panels, where
// q6k_super_block_zero_points takes ~110 for one row: xmm sums moved out lane by lane).
inline void q6k_row_zero_points(const uint8_t* a, int32_t z[64]) {
  const __m512i u32 = _mm512_set1_epi8(32);
  for (size_t q = 0; q < 4; ++q) {
    const uint8_t* p = a + 4 * (q % 2) * x86lhs::kBlockBytes + 16 * (q / 2);
    __m512i x = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    x = _mm512_inserti32x4(x, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + x86lhs::kBlockBytes)), 1);
    x = _mm512_inserti32x4(x, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * x86lhs::kBlockBytes)), 2);
    x = _mm512_inserti32x4(x, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3 * x86lhs::kBlockBytes)), 3);
    __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u32, x);
    s = _mm512_add_epi32(s, _mm512_shuffle_epi32(s, _MM_PERM_BADC));
    s = _mm512_add_epi32(s, _mm512_shuffle_epi32(s, _MM_PERM_CDAB));
    _mm512_storeu_si512(z + 16 * q, _mm512_sub_epi32(_mm512_setzero_si512(), s));
  }
}

struct Q6KZeroPointsZmm {
  static void fill(const uint8_t* a, int32_t z[64]) { q6k_row_zero_points(a, z); }
};

}  // namespace
}  // namespace qmm::x86q
