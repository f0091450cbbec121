// Portable stand-ins for AVX-512 (F/BW/VL/VNNI) and AVX-VNNI intrinsics, from SIMDe, so the
// zmm / {vex} kernels' code runs on a CPU without those instructions (this host: Zen 3). It
// checks the kernels' logic — layouts, indexing, tails, zero points, clamps — not the
// instruction encodings. Force-included into the wrapper sources of this directory only.
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include "core/fp16.h"

namespace qmm::emulated {

// SIMDe 0.7 has no vcvtph2ps / vcvtdq2ps zmm, no masked ps store and no AVX-VNNI ({vex}) spelling.
inline simde__m512 cvtph_ps(simde__m256i h) {
  uint16_t in[16];
  float out[16];
  std::memcpy(in, &h, sizeof(in));
  for (int i = 0; i < 16; ++i) out[i] = fp16_to_fp32(in[i]);
  return simde_mm512_loadu_ps(out);
}

inline simde__m512 cvtepi32_ps(simde__m512i v) {
  int32_t in[16];
  float out[16];
  std::memcpy(in, &v, sizeof(in));
  for (int i = 0; i < 16; ++i) out[i] = static_cast<float>(in[i]);
  return simde_mm512_loadu_ps(out);
}

inline simde__m512i cvtepu8_epi32(simde__m128i v) {  // not aliased by SIMDe 0.7.4
  uint8_t in[16];
  int32_t out[16];
  std::memcpy(in, &v, sizeof(in));
  for (int i = 0; i < 16; ++i) out[i] = in[i];
  return simde_mm512_loadu_si512(out);
}

inline simde__m512i cvtepi8_epi32(simde__m128i v) {  // not aliased by SIMDe 0.7.4
  int8_t in[16];
  int32_t out[16];
  std::memcpy(in, &v, sizeof(in));
  for (int i = 0; i < 16; ++i) out[i] = in[i];
  return simde_mm512_loadu_si512(out);
}

inline void mask_storeu_ps(float* dst, simde__mmask16 mask, simde__m512 v) {
  float lanes[16];
  simde_mm512_storeu_ps(lanes, v);
  for (int i = 0; i < 16; ++i) {
    if ((mask >> i) & 1) dst[i] = lanes[i];
  }
}

}  // namespace qmm::emulated

#define _mm512_cvtph_ps qmm::emulated::cvtph_ps
#define _mm512_cvtepi32_ps qmm::emulated::cvtepi32_ps
#define _mm512_mask_storeu_ps qmm::emulated::mask_storeu_ps
#define _mm512_cvtepu8_epi32 qmm::emulated::cvtepu8_epi32
#define _mm512_cvtepi8_epi32 qmm::emulated::cvtepi8_epi32
#define _mm256_dpbusd_avx_epi32 simde_mm256_dpbusd_epi32
#undef _mm512_madd_epi16  // SIMDe 0.7.4 defines it with the masked form's 4 arguments
#define _mm512_madd_epi16(a, b) simde_mm512_madd_epi16(a, b)
