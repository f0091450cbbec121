// AVX2 + F16C twin of lhs_quant_pack_qsi8d32pscalef32sum_f32_ref (layout in the header).
// One 32-block of one row per step: four ymm of F32, |x| max (as int32, so NaN and Inf win and
// the block follows the NaN policy), one scalar division (as the
// reference: scale = amax/127, inv = 1/scale), q = round-half-away(x · inv) as
// trunc + (|frac| >= 0.5 ? ±1 : 0) (exact: the fraction of a float is exact), then
// int32 -> int8 with packs + one lane permute.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/fp16.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"

namespace qmm {
namespace {

// Quantizes x[0..31]: returns the 32 int8 in element order, the f16-rounded scale and the
// int16 pair (−8·Σ over j%4 < 2, −8·Σ over j%4 >= 2) as one 32-bit value.
inline __m256i quantize_block(const float* x, float* scale_out, uint32_t* sums_out) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8);
  const __m256 v2 = _mm256_loadu_ps(x + 16), v3 = _mm256_loadu_ps(x + 24);
  // |x| max on the bits as int32: for |x| (sign clear) integer order is float order, and NaN
  // (above +Inf) wins, so a NaN or ±Inf anywhere makes amax non-finite (the NaN policy).
  auto abs_bits = [&](__m256 v) { return _mm256_castps_si256(_mm256_andnot_ps(sign, v)); };
  const __m256i a = _mm256_max_epi32(_mm256_max_epi32(abs_bits(v0), abs_bits(v1)),
                                     _mm256_max_epi32(abs_bits(v2), abs_bits(v3)));
  __m128i h = _mm_max_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  h = _mm_max_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
  h = _mm_max_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
  const float scale = _mm_cvtss_f32(_mm_castsi128_ps(h)) / 127.0f;
  const uint16_t scale16 = fp32_to_fp16(scale);
  if (!fp16_is_finite(scale16)) {  // NaN scale, zero quants (as the reference)
    *scale_out = NAN;
    *sums_out = 0;
    return _mm256_setzero_si256();
  }
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  *scale_out = fp16_to_fp32(scale16);

  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  auto round = [&](__m256 v) {
    const __m256 t = _mm256_mul_ps(v, vinv);
    const __m256 r = _mm256_round_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 up = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(t, r)), half, _CMP_GE_OQ);
    const __m256 step = _mm256_and_ps(up, _mm256_or_ps(_mm256_and_ps(t, sign), one));
    return _mm256_cvttps_epi32(_mm256_add_ps(r, step));
  };
  const __m256i i0 = round(v0), i1 = round(v1), i2 = round(v2), i3 = round(v3);
  __m256i s = _mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3));
  // Lane l of s sums the elements j ≡ l (mod 8): fold to j mod 4, then pairs {0,1} and {2,3}.
  const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  const __m128i s2 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(2, 3, 0, 1)));  // lanes 0, 2
  const __m128i pair = _mm_mullo_epi32(s2, _mm_set1_epi32(-8));
  *sums_out = static_cast<uint32_t>(_mm_extract_epi32(pair, 0) & 0xffff) |
              static_cast<uint32_t>(_mm_extract_epi32(pair, 2)) << 16;
  const __m256i q = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
  return _mm256_permutevar8x32_epi32(q, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

void run(size_t m, size_t k, size_t mr, size_t, size_t, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t blocks = k / kBlock;
  const size_t panel = x86lhs::panel_bytes(mr, k);
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel) {
    const size_t rows = m - p0 < mr ? m - p0 : mr;
    if (rows < mr) std::memset(out, 0, panel);
    for (size_t r = 0; r < rows; ++r) {
      const auto* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      for (size_t b = 0; b < blocks; ++b) {
        uint8_t* blk = out + b * mr * x86lhs::kBlockBytes;
        float scale;
        uint32_t sums;
        const __m256i q = quantize_block(row + b * kBlock, &scale, &sums);
        if (mr == 1) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(blk), q);
        } else {
          alignas(32) uint32_t chunk[8];
          _mm256_store_si256(reinterpret_cast<__m256i*>(chunk), q);
          for (size_t c = 0; c < 8; ++c) std::memcpy(blk + c * 4 * mr + 4 * r, &chunk[c], 4);
        }
        std::memcpy(blk + 32 * mr + 4 * r, &scale, 4);
        std::memcpy(blk + 36 * mr + 4 * r, &sums, 4);
      }
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 = {
    "lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2", x86lhs::packed_size, x86lhs::packed_offset, run,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_ref};

}  // namespace qmm
