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
  static float half(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    return _cvtsh_ss(h);
  }
};

}  // namespace

void attend_chunk_avx2(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk, size_t pos0,
                       size_t rows, float scale, float softcap, float* scratch, float* part) {
  chunk_impl<Avx2>(q, q_stride, heads, kv, hd, chunk, pos0, rows, scale, softcap, scratch, part);
}

}  // namespace qmm::llm
