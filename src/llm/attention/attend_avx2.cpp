#include "llm/attention/attend_avx2.h"

#include <immintrin.h>

#include "llm/attention/attend_chunk_impl.h"

namespace qmm::llm {
namespace {

struct Avx2 {
  using Kb = __m256i;
  static Kb load_q8(const uint8_t* qs) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)); }
  static Kb load_q4(const uint8_t* qs) {  // low nibbles are values 0-15, high nibbles 16-31
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i x = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0f));
    return _mm256_sub_epi8(x, _mm256_set1_epi8(8));
  }
  // |q| · (k with q's sign) in int16 pairs (|q|, |k| ≤ 127: no saturation), then pairs of pairs.
  static v8 dot(Kb k, const int8_t* q, const int8_t* q_abs) {
    const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q_abs));
    const __m256i pairs = _mm256_maddubs_epi16(qa, _mm256_sign_epi8(k, qv));
    return std::bit_cast<v8>(_mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1))));
  }
  template <bool Q4, size_t H>
  static void scores(const int8_t* qs, const int8_t* q_abs, const float* qd, const uint8_t* k, size_t stride, size_t hd, size_t len,
                     float scale, float* att) {
    scores_int8<Avx2, Q4, H>(qs, q_abs, qd, k, stride, hd, len, scale, att);
  }
  static constexpr bool kQ8ValuesDirect = false;
  static constexpr bool kF16Direct = true;
  static v8 load8_f16(const uint16_t* p) { return std::bit_cast<v8>(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))); }
  template <size_t H, class T>
  static void scores_rows(const float* q, const T* k, size_t stride, size_t hd, size_t len, float scale, float* att) {
    scores_rows_v8<Avx2, H>(q, k, stride, hd, len, scale, att);
  }
  template <size_t H, class T>
  static void accumulate_values(const float* att, const T* v, size_t stride, size_t hd, size_t len, float* out, size_t ps) {
    accumulate_values_v8<Avx2, H>(att, v, stride, hd, len, out, ps);
  }
  static float half(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    return _cvtsh_ss(h);
  }
  // Q8_0 / Q4_0 rows as F32 (d · q, exact) eight values a conversion; F32 / F16 by kv_load (F16C).
  static void load_rows(KvType t, const uint8_t* rows, size_t stride, size_t count, float* out, size_t hd) {
    if (!attend_int8_keys(t)) {
      kv_load(t, rows, stride, count, out, hd);
      return;
    }
    const size_t bytes = t == KvType::q4_0 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
    for (size_t r = 0; r < count; ++r, rows += stride) {
      for (size_t b = 0; b < hd / kBlock; ++b, out += kBlock) {
        const uint8_t* blk = rows + b * bytes;
        const __m256 d = _mm256_set1_ps(half(blk));
        const __m256i q = t == KvType::q4_0 ? load_q4(blk + 2) : load_q8(blk + 2);
        const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
        _mm256_storeu_ps(out, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
        _mm256_storeu_ps(out + 8, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
        _mm256_storeu_ps(out + 16, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
        _mm256_storeu_ps(out + 24, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
      }
    }
  }
};

}  // namespace

void attend_chunk_avx2(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk, size_t pos0,
                       size_t rows, float scale, float softcap, float* scratch, float* part) {
  chunk_impl<Avx2>(q, q_stride, heads, kv, hd, chunk, pos0, rows, scale, softcap, scratch, part);
}

}  // namespace qmm::llm
