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

// The ymm instructions of the vector-generic loops (x86_qloops.h).
struct Ymm {
  using F = __m256;
  using I = __m256i;
  static constexpr size_t kLanes = 8;
  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float x) { return _mm256_set1_ps(x); }
  static F broadcast_f32(const uint8_t* p) { return avx2::broadcast_f32(p); }
  static F load_f16(const uint8_t* p) { return load_f16x8(p); }
  static F add_scaled(F acc, I s, F sw, F sa) { return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(sw, sa), acc); }
  static void store_clamped(float* dst, F v, size_t cols, F lo, F hi) { avx2::store_clamped(dst, v, cols, lo, hi); }
  static I load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static I broadcast4(const uint8_t* p) { return avx2::broadcast4(p); }
  static I set1_i8(char x) { return _mm256_set1_epi8(x); }
  static I and_(I a, I b) { return _mm256_and_si256(a, b); }
  static I srli16_4(I a) { return _mm256_srli_epi16(a, 4); }
  static I madd_i16(I a, short c) { return _mm256_madd_epi16(a, _mm256_set1_epi16(c)); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F to_f32(I a) { return _mm256_cvtepi32_ps(a); }
  // 8 bytes at p (one per lane) -> F32.
  static F load_u8_f32(const uint8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  // For the K-quant / IQ4_NL blocks (x86_kblocks.h).
  static I or_(I a, I b) { return _mm256_or_si256(a, b); }
  static I or_and(I a, I mask, I b) { return _mm256_or_si256(_mm256_and_si256(a, mask), b); }  // (a & mask) | b
  static I bitselect(I a, I b, I mask) {  // (a & mask) | (b & ~mask): vpternlogd's one op as three
    return _mm256_or_si256(_mm256_and_si256(a, mask), _mm256_andnot_si256(mask, b));
  }
  static I srli16(I a, int n) { return _mm256_srli_epi16(a, n); }
  static I slli16(I a, int n) { return _mm256_slli_epi16(a, n); }
  static I add_i32(I a, I b) { return _mm256_add_epi32(a, b); }
  static I maddubs(I u, I a) { return _mm256_maddubs_epi16(u, a); }
  static I shuffle_i8(I table, I idx) { return _mm256_shuffle_epi8(table, idx); }
  static I broadcast16(const uint8_t* p) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  // 8 int8 at p (one per lane) -> int32.
  static I load_i8_i32(const uint8_t* p) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
};

}  // namespace
}  // namespace qmm::avx2
