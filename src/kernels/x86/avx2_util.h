// Small AVX2 helpers shared by the x86 ymm kernels. Include only from sources compiled with
// AVX2 flags (src/kernels/x86/sources.cmake).
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace qmm::avx2 {
namespace {  // internal linkage: AVX2 and AVX-VNNI files include this with different flags

// The 4 bytes at p in every 32-bit lane.
inline __m256i broadcast4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

inline int32_t load_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline __m256 broadcast_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_ps(v);
}

// 8 f16 at p -> F32.
inline __m256 load_f16x8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// min(max(v, lo), hi) with the scalar reference's NaN behaviour (a NaN stays NaN), then the
// first `cols` (1..8) lanes to dst.
inline void store_clamped(float* dst, __m256 v, size_t cols, __m256 lo, __m256 hi) {
  v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
  if (cols == 8) {
    _mm256_storeu_ps(dst, v);
  } else {
    alignas(32) float t[8];
    _mm256_store_ps(t, v);
    std::memcpy(dst, t, cols * sizeof(float));
  }
}

inline float* row_ptr(float* dst, size_t stride_bytes, size_t i) {
  return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride_bytes);
}

}  // namespace
}  // namespace qmm::avx2
