// x86: F16C conversions when the CPU has them (vcvtph2ps / vcvtps2ph round to nearest even,
// identical to the portable code), else the portable loops.
#include <immintrin.h>

#include "core/cpu.h"
#include "core/fp16.h"

namespace qmm {

void fp16_to_fp32_row_portable(const uint16_t* src, float* dst, size_t n);
void fp32_to_fp16_row_portable(const float* src, uint16_t* dst, size_t n);

namespace {

__attribute__((target("avx,f16c"))) void to_f32_f16c(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
  fp16_to_fp32_row_portable(src + i, dst + i, n - i);
}

__attribute__((target("avx,f16c"))) void to_f16_f16c(const float* src, uint16_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  }
  fp32_to_fp16_row_portable(src + i, dst + i, n - i);
}

bool have_f16c() { return cpu_info().has(kFeatF16C); }

}  // namespace

void fp16_to_fp32_row(const uint16_t* src, float* dst, size_t n) {
  static const bool hw = have_f16c();
  (hw ? to_f32_f16c : fp16_to_fp32_row_portable)(src, dst, n);
}

void fp32_to_fp16_row(const float* src, uint16_t* dst, size_t n) {
  static const bool hw = have_f16c();
  (hw ? to_f16_f16c : fp32_to_fp16_row_portable)(src, dst, n);
}

}  // namespace qmm
