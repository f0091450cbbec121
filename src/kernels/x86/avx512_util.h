// Small AVX-512 helpers shared by the x86 zmm kernels. Include only from sources compiled with
// AVX-512 flags (src/kernels/x86/sources.cmake).
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace qmm::avx512 {

inline int32_t load_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline __m512 broadcast_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_ps(v);
}

// 16 f16 at p -> F32.
inline __m512 load_f16x16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// min(max(v, lo), hi) with the scalar reference's NaN behaviour, then the first `cols` (1..16)
// lanes to dst.
inline void store_clamped(float* dst, __m512 v, size_t cols, __m512 lo, __m512 hi) {
  v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
  _mm512_mask_storeu_ps(dst, static_cast<__mmask16>((1u << cols) - 1u), v);
}

inline float* row_ptr(float* dst, size_t stride_bytes, size_t i) {
  return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride_bytes);
}

}  // namespace qmm::avx512
