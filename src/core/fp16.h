// IEEE 754 binary16 <-> binary32 conversion, portable and bit-exact:
// round to nearest even, subnormals, infinities and NaNs (payload kept, made quiet).
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

namespace qmm {

inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in binary32
    const float f = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -f : f;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t fp32_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or NaN (NaN stays NaN: quiet bit set)
    return static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u));
  }
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {  // below 2^-14: the result is subnormal (or zero)
    // Adding 0.5 (ulp 2^-24, the binary16 subnormal step) rounds to nearest even for us.
    const float r = std::bit_cast<float>(ax) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(r) - 0x3f000000u));
  }
  const uint32_t odd = (ax >> 13) & 1u;
  ax += 0xc8000fffu + odd;  // rebias the exponent by -112 and round to nearest even
  return static_cast<uint16_t>(sign | (ax >> 13));
}

// The NaN policy (include/qmm/qmm.h): a block scale that is not a finite binary16 (Inf, NaN,
// or an F32 scale that rounds to Inf) is stored as this quiet NaN, with zero quants, so the
// block's products and every output they reach are NaN on every kernel.
constexpr uint16_t kFp16NaN = 0x7e00;
inline bool fp16_is_finite(uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }
// A weight block's scale d as the RHS packers store it: ±Inf becomes NaN too.
inline uint16_t fp16_scale_or_nan(uint16_t d) { return fp16_is_finite(d) ? d : kFp16NaN; }

// Row conversions; the library routes these to F16C/FP16 hardware where the CPU has it.
void fp16_to_fp32_row(const uint16_t* src, float* dst, size_t n);
void fp32_to_fp16_row(const float* src, uint16_t* dst, size_t n);

}  // namespace qmm
