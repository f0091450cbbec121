// What the x86 attention kernels (attend_avx2, attend_avx512) share: a Q8_0 / Q4_0 key block's
// 32 int8 values in a ymm, F16 rows converted by F16C. Compiled in each variant's file, with its
// flags (attend_chunk_impl.h's policy members).
#pragma once
#include <immintrin.h>

#include <bit>
#include <cstdint>

#include "llm/attention/vec8.h"

namespace qmm::llm {
namespace {

struct X86Keys {
  using Kb = __m256i;
  static Kb load_q8(const uint8_t* qs) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)); }
  static Kb load_q4(const uint8_t* qs) {  // low nibbles are values 0-15, high nibbles 16-31
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i x = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0f));
    return _mm256_sub_epi8(x, _mm256_set1_epi8(8));
  }
  static constexpr bool kF16Direct = true;
  static v8 load8_f16(const uint16_t* p) { return std::bit_cast<v8>(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))); }
};

}  // namespace
}  // namespace qmm::llm
