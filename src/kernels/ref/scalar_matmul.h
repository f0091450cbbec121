// The scalar matmul loop shared by the reference kernels: plain loops over the packed
// layouts' element accessors (kernels/ref/layouts.h). Quantized types sum exactly in int32
// per 32-block, then accumulate acc += isum · (s_lhs · s_rhs) in F32, block by block.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/ref/layouts.h"

namespace qmm::scalar {

inline float clamp(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }

// Lhs/Rhs: value(panel, R, r, c) -> int, scale(panel, R, k, r, b) -> float, panel_bytes(R, k).
template <class Lhs, class Rhs>
void matmul_quantized(size_t m, size_t n, size_t k, size_t mr, size_t nr, const void* lhs_packed,
                      const void* rhs_packed, float* dst, size_t dst_stride, float lo, float hi) {
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t i = 0; i < m; ++i) {
    const uint8_t* lp = lhs + i / mr * Lhs::panel_bytes(mr, k);
    float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * dst_stride);
    for (size_t j = 0; j < n; ++j) {
      const uint8_t* rp = rhs + j / nr * Rhs::panel_bytes(nr, k);
      float acc = 0.0f;
      for (size_t b = 0; b < k / kBlock; ++b) {
        int32_t isum = 0;
        for (size_t c = b * kBlock; c < (b + 1) * kBlock; ++c) {
          isum += Lhs::value(lp, mr, i % mr, c) * Rhs::value(rp, nr, j % nr, c);
        }
        acc += static_cast<float>(isum) * (Lhs::scale(lp, mr, k, i % mr, b) * Rhs::scale(rp, nr, k, j % nr, b));
      }
      out[j] = clamp(acc, lo, hi);
    }
  }
}

// F32 LHS panels × T RHS panels (T = float or f16 bits), F32 accumulation in k order.
template <class Rhs>
void matmul_float(size_t m, size_t n, size_t k, size_t mr, size_t nr, size_t kr, const void* lhs_packed,
                  const void* rhs_packed, float* dst, size_t dst_stride, float lo, float hi) {
  const size_t kp = layout::round_up(k, kr);
  const auto* lhs = static_cast<const float*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) {
    const float* lp = lhs + i / mr * mr * kp;
    float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * dst_stride);
    for (size_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (size_t c = 0; c < k; ++c) {
        acc += lp[layout::panel_index(mr, kr, i % mr, c)] * Rhs::value(rhs_packed, j / nr * nr * kp + layout::panel_index(nr, kr, j % nr, c));
      }
      out[j] = clamp(acc, lo, hi);
    }
  }
}

// Accessors for the layouts the reference kernels read.
struct Qsi8d32p {  // LHS, kr = 4
  static size_t panel_bytes(size_t mr, size_t k) { return layout::qsi8d32p_panel_bytes(mr, k); }
  static int value(const uint8_t* p, size_t mr, size_t r, size_t c) { return layout::qsi8d32p_value(p, mr, 4, r, c); }
  static float scale(const uint8_t* p, size_t mr, size_t k, size_t r, size_t b) {
    return layout::qsi8d32p_scale(p, mr, k, r, b);
  }
};
struct Qsi4c32ps1s0 {  // RHS Q4_0, kr = 4, sr = 2
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi4c32ps1s0_panel_bytes(nr, k); }
  static int value(const uint8_t* p, size_t nr, size_t r, size_t c) { return layout::qsi4c32ps1s0_value(p, nr, r, c); }
  static float scale(const uint8_t* p, size_t nr, size_t k, size_t r, size_t b) {
    return layout::qsi4c32ps1s0_scale(p, nr, k, r, b);
  }
};
struct Qsi8c32p {  // RHS Q8_0, kr = 4
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi8c32p_panel_bytes(nr, k); }
  static int value(const uint8_t* p, size_t nr, size_t r, size_t c) { return layout::qsi8c32p_value(p, nr, 4, r, c); }
  static float scale(const uint8_t* p, size_t nr, size_t k, size_t r, size_t b) {
    return layout::qsi8c32p_scale(p, nr, k, r, b);
  }
};
struct F32p {
  static float value(const void* p, size_t idx) { return static_cast<const float*>(p)[idx]; }
};
struct F16p {
  static float value(const void* p, size_t idx) { return fp16_to_fp32(static_cast<const uint16_t*>(p)[idx]); }
};

}  // namespace qmm::scalar
