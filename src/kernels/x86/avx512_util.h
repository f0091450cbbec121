// Small AVX-512 helpers shared by the x86 zmm kernels. Include only from sources compiled with
// AVX-512 flags (src/kernels/x86/sources.cmake).
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/x86/avx2_util.h"

namespace qmm::avx512 {
namespace {  // internal linkage, as avx2_util.h

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

// The zmm instructions of the vector-generic loops and VNNI blocks (x86_qloops.h).
struct Zmm {
  using F = __m512;
  using I = __m512i;
  static constexpr size_t kLanes = 16;
  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float x) { return _mm512_set1_ps(x); }
  static F broadcast_f32(const uint8_t* p) { return avx512::broadcast_f32(p); }
  static F load_f16(const uint8_t* p) { return load_f16x16(p); }
  static F add_scaled(F acc, I s, F sw, F sa) { return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(sw, sa), acc); }
  static void store_clamped(float* dst, F v, size_t cols, F lo, F hi) { avx512::store_clamped(dst, v, cols, lo, hi); }
  static I load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static I broadcast4(const uint8_t* p) { return _mm512_set1_epi32(load_i32(p)); }
  static I set1_i8(char x) { return _mm512_set1_epi8(x); }
  static I and_(I a, I b) { return _mm512_and_si512(a, b); }
  static I srli16_4(I a) { return _mm512_srli_epi16(a, 4); }
  static I madd_i16(I a, short c) { return _mm512_madd_epi16(a, _mm512_set1_epi16(c)); }
  static I dpbusd(I s, I u, I a) { return _mm512_dpbusd_epi32(s, u, a); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F to_f32(I a) { return _mm512_cvtepi32_ps(a); }
  // 16 bytes at p (one per lane) -> F32.
  static F load_u8_f32(const uint8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  // For the K-quant / IQ4_NL blocks (x86_kblocks.h).
  static I or_(I a, I b) { return _mm512_or_si512(a, b); }
  static I or_and(I a, I mask, I b) { return _mm512_ternarylogic_epi32(a, mask, b, 0xea); }  // (a & mask) | b
  static I bitselect(I a, I b, I mask) { return _mm512_ternarylogic_epi32(a, b, mask, 0xe4); }  // (a & mask) | (b & ~mask)
  static I srli16(I a, int n) { return _mm512_srli_epi16(a, static_cast<unsigned>(n)); }
  static I slli16(I a, int n) { return _mm512_slli_epi16(a, static_cast<unsigned>(n)); }
  static I add_i32(I a, I b) { return _mm512_add_epi32(a, b); }
  static I shuffle_i8(I table, I idx) { return _mm512_shuffle_epi8(table, idx); }
  static I broadcast16(const uint8_t* p) {
    return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  // 16 int8 at p (one per lane) -> int32.
  static I load_i8_i32(const uint8_t* p) {
    return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
};

// ymm over the zmm kernels' 16-column panels (AVX-512VL: vpdpbusd ymm, vpternlogd ymm,
// ymm16-31): x86_qloops.h's loops split each panel into two 8-column sub-panels, so the zmm
// and ymm GEMVs read the same packed weights and the tuner can choose between them (a CPU
// that runs zmm at half rate or at a lower clock may prefer ymm). The same operations per
// lane in the same order as Zmm: the same bits.
struct Ymm16 : avx2::Ymm {
  static constexpr size_t kPanel = 16;
  static I dpbusd(I s, I u, I a) { return _mm256_dpbusd_epi32(s, u, a); }
  static I or_and(I a, I mask, I b) { return _mm256_ternarylogic_epi32(a, mask, b, 0xea); }  // (a & mask) | b
  static I bitselect(I a, I b, I mask) { return _mm256_ternarylogic_epi32(a, b, mask, 0xe4); }  // (a & mask) | (b & ~mask)
};

}  // namespace
}  // namespace qmm::avx512
