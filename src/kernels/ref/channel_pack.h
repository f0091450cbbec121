// The loop shared by the per-channel RHS packers (qsi8cxp, qsi4cxp): QC8 / QC4 rows
// (core/channels.h) -> nr-row panels of values, then each panel's tail of row sums, scales and
// biases (kernels/ref/layouts_c.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/channels.h"
#include "kernels/ref/layouts_c.h"

namespace qmm::layout {

// Format: row_bytes(k), panel_bytes(nr, k), data_bytes(nr, k), value(row, c) -> int,
// put(panel, e, q) storing value q at element index e of the panel.
template <class Format>
void pack_channel_rows(size_t n, size_t k, size_t nr, size_t kr, const void* rhs, void* rhs_packed) {
  const size_t panel_bytes = Format::panel_bytes(nr, k), rb = Format::row_bytes(k);
  const auto* src = static_cast<const uint8_t*>(rhs);
  for (size_t row = 0; row < n; ++row) {
    uint8_t* panel = static_cast<uint8_t*>(rhs_packed) + row / nr * panel_bytes;
    const uint8_t* in = src + row * rb;
    const size_t r = row % nr;
    int64_t sum = 0;  // stored modulo 2^32 (exact for k < 2^24)
    for (size_t c = 0; c < k; ++c) {
      const int q = Format::value(in, c);
      Format::put(panel, panel_index(nr, kr, r, c), q);
      sum += q;
    }
    put_channel_tail(panel + Format::data_bytes(nr, k), nr, r, static_cast<int32_t>(sum), scale_or_nan(qmm::channel_scale(in)),
                     qmm::channel_bias(in));
  }
}

}  // namespace qmm::layout
