// AVX2 + F16C twin of lhs_quant_pack_qsi8d32pscalef32sum_f32_ref (layout in the header): per
// 32-block |x| max (as int32, so NaN and Inf win and the block follows the NaN policy), the
// reference's scale = amax/127 and inv = 1/scale (eight blocks per division), then
// q = round-half-away(x · inv) and int32 -> int8 with packs + one lane permute.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/fp16.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"

namespace qmm {
namespace {

// |x| max of x[0..31] as int32 bits: for |x| (sign clear) integer order is float order, and
// NaN (above +Inf) wins, so a NaN or ±Inf anywhere makes amax non-finite (the NaN policy).
inline int32_t abs_max_bits(const float* x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  auto abs_bits = [&](const float* p) { return _mm256_castps_si256(_mm256_andnot_ps(sign, _mm256_loadu_ps(p))); };
  const __m256i a = _mm256_max_epi32(_mm256_max_epi32(abs_bits(x), abs_bits(x + 8)), _mm256_max_epi32(abs_bits(x + 16), abs_bits(x + 24)));
  __m128i h = _mm_max_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  h = _mm_max_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
  h = _mm_max_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(h);
}

// The scales of 8 blocks from their amax bits, as the reference: scale = amax/127 rounded to
// f16 (F16C, round to nearest even), stored as F32 (NaN when not finite); inv = 1/scale of the
// unrounded scale (0 for 0; the quants of a NaN-scale block are zeroed by the caller).
inline void scales8(const int32_t* amax_bits, float* scale_out, float* inv_out) {
  const __m256 scale = _mm256_div_ps(_mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(amax_bits))),
                                     _mm256_set1_ps(127.0f));
  const __m128i h = _mm256_cvtps_ph(scale, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 rounded = _mm256_cvtph_ps(h);
  const __m256 exp_bits = _mm256_castsi256_ps(_mm256_cvtepu16_epi32(_mm_and_si128(h, _mm_set1_epi16(0x7c00))));
  const __m256 finite = _mm256_cmp_ps(exp_bits, _mm256_castsi256_ps(_mm256_set1_epi32(0x7c00)), _CMP_NEQ_UQ);
  _mm256_storeu_ps(scale_out, _mm256_blendv_ps(_mm256_set1_ps(NAN), rounded, finite));
  const __m256 nonzero = _mm256_cmp_ps(scale, _mm256_setzero_ps(), _CMP_NEQ_UQ);
  _mm256_storeu_ps(inv_out, _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), scale), nonzero));
}

// Quantizes x[0..31] by inv: returns the 32 int8 in element order and the int16 pair
// (−8·Σ over j%4 < 2, −8·Σ over j%4 >= 2) as one 32-bit value.
inline __m256i quantize_block(const float* x, float inv, uint32_t* sums_out) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  // round-half-away(x · inv) as trunc + (|frac| >= 0.5 ? ±1 : 0) (exact: a float's fraction is exact)
  auto round = [&](const float* p) {
    const __m256 t = _mm256_mul_ps(_mm256_loadu_ps(p), vinv);
    const __m256 r = _mm256_round_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 up = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(t, r)), half, _CMP_GE_OQ);
    const __m256 step = _mm256_and_ps(up, _mm256_or_ps(_mm256_and_ps(t, sign), one));
    return _mm256_cvttps_epi32(_mm256_add_ps(r, step));
  };
  const __m256i i0 = round(x), i1 = round(x + 8), i2 = round(x + 16), i3 = round(x + 24);
  __m256i s = _mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3));
  // Lane l of s sums the elements j ≡ l (mod 8): fold to j mod 4, then pairs {0,1} and {2,3}.
  const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  const __m128i s2 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(2, 3, 0, 1)));  // lanes 0, 2
  const __m128i pair = _mm_sub_epi32(_mm_setzero_si128(), _mm_slli_epi32(s2, 3));      // −8·s2
  *sums_out = static_cast<uint32_t>(_mm_cvtsi128_si32(pair) & 0xffff) | static_cast<uint32_t>(_mm_extract_epi32(pair, 2)) << 16;
  const __m256i q = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
  return _mm256_permutevar8x32_epi32(q, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// A row's blocks go in pieces of up to kPiece: first every amax, then their scales eight at a
// time, then the quants. Each block's chain (reduce, two divisions, f16 rounding, quantize)
// was one long dependency; split, the divisions of 8 blocks are one instruction and the
// quantize steps of consecutive blocks overlap (~2x at m = 1).
constexpr size_t kPiece = 64;

template <size_t kChunk>  // 4 (..._sum) or 32 (..._sumrows), as the reference's
void run(size_t m, size_t k, size_t mr, size_t, size_t, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t blocks = k / kBlock;
  const size_t panel = x86lhs::panel_bytes(mr, k);
  auto* out = static_cast<uint8_t*>(lhs_packed);
  alignas(32) int32_t amax[kPiece];
  alignas(32) float scale[kPiece], inv[kPiece];
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel) {
    const size_t rows = m - p0 < mr ? m - p0 : mr;
    if (rows < mr) std::memset(out, 0, panel);
    for (size_t r = 0; r < rows; ++r) {
      const auto* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      for (size_t b0 = 0; b0 < blocks; b0 += kPiece) {
        const size_t n = blocks - b0 < kPiece ? blocks - b0 : kPiece;
        for (size_t b = 0; b < n; ++b) amax[b] = abs_max_bits(row + (b0 + b) * kBlock);
        for (size_t b = n; b % 8 != 0; ++b) amax[b] = 0;
        for (size_t b = 0; b < n; b += 8) scales8(amax + b, scale + b, inv + b);
        for (size_t b = 0; b < n; ++b) {
          uint8_t* blk = out + (b0 + b) * mr * x86lhs::kBlockBytes;
          uint32_t sums = 0;
          __m256i q = _mm256_setzero_si256();
          if (scale[b] == scale[b]) q = quantize_block(row + (b0 + b) * kBlock, inv[b], &sums);  // NaN scale: zero quants
          if (mr == 1 || kChunk == kBlock) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(blk + 32 * r), q);
          } else {
            alignas(32) uint32_t chunk[8];
            _mm256_store_si256(reinterpret_cast<__m256i*>(chunk), q);
            for (size_t c = 0; c < 8; ++c) std::memcpy(blk + c * 4 * mr + 4 * r, &chunk[c], 4);
          }
          std::memcpy(blk + 32 * mr + 4 * r, &scale[b], 4);
          std::memcpy(blk + 36 * mr + 4 * r, &sums, 4);
        }
      }
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2 = {
    "lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2", x86lhs::packed_size, x86lhs::packed_offset, run<4>,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_ref};
const LhsPacker lhs_quant_pack_qsi8d32pscalef32sumrows_f32_avx2 = {
    "lhs_quant_pack_qsi8d32pscalef32sumrows_f32_avx2", x86lhs::packed_size, x86lhs::packed_offset, run<kBlock>,
    &lhs_quant_pack_qsi8d32pscalef32sumrows_f32_ref, LhsChunk::block};

}  // namespace qmm
