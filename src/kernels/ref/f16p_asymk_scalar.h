// The block decoder of the scalar F16-activation GEMMs of the asymmetric K-quants (Q4_K, Q5_K:
// w = d·sc·q − dmin·m per 32-element sub-block), shared by
// matmul_clamp_f32_f16p4x2_q4kp8x4_4x8_scalar and matmul_clamp_f32_f16p4x2_q5kp8x4_4x8_scalar
// (their headers give the contract; the loop is kernels/ref/f16p_scalar.h's): per sub-block,
//
//   w = f16(q · f16(d·sc) − f16(dmin·m)): the 6-bit factors times the super-block's f16 d / dmin,
//   each rounded to F16, then the weight rounded once (the SME2 kernels' FMUL and FMAD).
//
// k a multiple of 256. Include only from those two sources.
#pragma once
#include <cmath>
#include <cstring>

#include "kernels/ref/f16p_scalar.h"
#include "kernels/ref/layouts_k.h"

namespace qmm::f16p {
namespace {  // internal linkage: one copy per kernel source

// x rounded once to F16: x exact in double; rounded to odd in F32 (24 bits, more than F16's 11
// + 2), which FP32 -> F16 then rounds to nearest even as one rounding would.
inline uint16_t f16_once(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) != x) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 1) == 0) f = std::nextafter(f, x > f ? INFINITY : -INFINITY);
  }
  return fp32_to_fp16(f);
}

// L: layout::Q4kp or layout::Q5kp.
template <class L>
struct AsymK {
  static constexpr size_t kLen = 32;
  static size_t panel_bytes(size_t nr, size_t k) { return L::panel_bytes(nr, k); }
  static void weights(const uint8_t* panel, size_t nr, size_t, size_t r, size_t b, float* w) {
    // d·sc and dmin·m are exact in F32 (11 × 6 bits), rounded once to F16
    const double s = fp16_to_fp32(fp32_to_fp16(L::factor(panel, nr, r, b, 0)));
    const double mn = fp16_to_fp32(fp32_to_fp16(L::factor(panel, nr, r, b, 1)));
    for (size_t c = 0; c < kLen; ++c) {
      // q·s (16 bits) and its difference with mn are exact in double: one rounding to F16
      w[c] = fp16_to_fp32(f16_once(L::value(panel, nr, r, b * kLen + c) * s - mn));
    }
  }
};

}  // namespace
}  // namespace qmm::f16p
