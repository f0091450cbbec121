// The scalar loop of the per-channel family (qai8dxp LHS × qsi8cxp / qsi4cxp RHS): per output
//   isum = Σ_c q_lhs·q_rhs + (-zp_lhs)·Σ_c q_rhs        (exact, in int64)
//   dst  = clamp(float(isum) · (scale_lhs · scale_rhs) + bias, min, max)
// Kernels with SIMD accumulate isum in int32 (exact while k < 2^16) and must give these bits.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/ref/layouts_c.h"
#include "kernels/ref/scalar_matmul.h"

namespace qmm::scalar {

// Rhs: value(panel, nr, kr, r, c) -> int, data_bytes(nr, k), panel_bytes(nr, k).
template <class Rhs>
void matmul_channel(size_t m, size_t n, size_t k, size_t mr, size_t nr, size_t kr, const void* lhs_packed,
                    const void* rhs_packed, float* dst, size_t dst_stride, float lo, float hi) {
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t i = 0; i < m; ++i) {
    const uint8_t* lp = lhs + i / mr * layout::qai8dxp_panel_bytes(mr, k);
    float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * dst_stride);
    for (size_t j = 0; j < n; ++j) {
      const uint8_t* rp = rhs + j / nr * Rhs::panel_bytes(nr, k);
      const uint8_t* tail = rp + Rhs::data_bytes(nr, k);
      int64_t isum = 0;
      for (size_t c = 0; c < k; ++c) {
        isum += layout::qai8dxp_value(lp, mr, kr, i % mr, c) * Rhs::value(rp, nr, kr, j % nr, c);
      }
      isum += int64_t{layout::qai8dxp_neg_zero_point(lp, mr, k, i % mr)} * layout::channel_row_sum(tail, j % nr);
      const float s = layout::qai8dxp_scale(lp, mr, k, i % mr) * layout::channel_scale(tail, nr, j % nr);
      // The product rounded, then the bias added: two statements, and the file is compiled with
      // -ffp-contract=off, so no compiler fuses them (KleidiAI's bits).
      const float product = static_cast<float>(isum) * s;
      out[j] = clamp(product + layout::channel_bias(tail, nr, j % nr), lo, hi);
    }
  }
}

struct Qsi8cxp {
  static size_t data_bytes(size_t nr, size_t k) { return layout::qsi8cxp_data_bytes(nr, k); }
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi8cxp_panel_bytes(nr, k); }
  static int value(const uint8_t* p, size_t nr, size_t kr, size_t r, size_t c) { return layout::qsi8cxp_value(p, nr, kr, r, c); }
};
struct Qsi4cxp {
  static size_t data_bytes(size_t nr, size_t k) { return layout::qsi4cxp_data_bytes(nr, k); }
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi4cxp_panel_bytes(nr, k); }
  static int value(const uint8_t* p, size_t nr, size_t kr, size_t r, size_t c) { return layout::qsi4cxps1s0_value(p, nr, kr, r, c); }
};

}  // namespace qmm::scalar
