#include "llm/attention/attend_avx2.h"

#include <immintrin.h>

#include "llm/attention/attend_chunk_impl.h"
#include "llm/attention/attend_x86.h"

namespace qmm::llm {
namespace {

struct Avx2 : X86Keys, VectorLoops<Avx2> {
  // |q| · (k with q's sign) in int16 pairs (|q|, |k| ≤ 127: no saturation), then pairs of pairs.
  static v8i dot_i(Kb k, const int8_t* q, const int8_t* q_abs) {
    const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q_abs));
    const __m256i pairs = _mm256_maddubs_epi16(qa, _mm256_sign_epi8(k, qv));
    return std::bit_cast<v8i>(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  static constexpr bool kQ8ValuesDirect = false;
  // A Q8_0 / Q4_0 block staged as F32 (d · q, exact) eight values a conversion.
  static void store_block(float d, Kb q, float* out) {
    const __m256 dv = _mm256_set1_ps(d);
    const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    _mm256_storeu_ps(out, _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
    _mm256_storeu_ps(out + 8, _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
    _mm256_storeu_ps(out + 16, _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
    _mm256_storeu_ps(out + 24, _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
  }
};

}  // namespace

void attend_chunk_avx2(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk, size_t pos0,
                       size_t rows, float scale, float softcap, float* scratch, float* part) {
  chunk_impl<Avx2>(q, q_stride, heads, kv, hd, chunk, pos0, rows, scale, softcap, scratch, part);
}

}  // namespace qmm::llm
