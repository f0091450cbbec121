// The loops shared by the per-channel RHS packers (qsi8cxp, qsi4cxp, qsi4cxps1s0): rows of
// per-channel weights -> nr-row panels of values, then each panel's tail of row sums, scales and
// biases (kernels/ref/layouts_c.h). The rows come from a Source:
//   value(row, c) -> int (the weight, -128..127 or -8..7), scale(row), bias(row).
// QcRows reads qmm's QC8 / QC4 rows (core/channels.h); Qs4cxArrays KleidiAI's arguments
// (packed nibble rows, separate scale and bias arrays, rhs_zero_point 0 or 8).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/channels.h"
#include "kernels/ref/layouts_c.h"

namespace qmm::layout {

template <bool Int4>
struct QcRows {
  const uint8_t* base;
  size_t row_bytes;
  const uint8_t* row(size_t i) const { return base + i * row_bytes; }
  int value(size_t i, size_t c) const { return Int4 ? qc4_value(row(i), c) : qc8_value(row(i), c); }
  float scale(size_t i) const { return scale_or_nan(qmm::channel_scale(row(i))); }
  float bias(size_t i) const { return qmm::channel_bias(row(i)); }
};

// Rows of (k + 1)/2 bytes, element 2i in the low nibble of byte i; value = nibble - zero_point
// (8: unsigned qsu4cx), or the nibble as signed int4 (0: qs4cx).
struct Qs4cxArrays {
  const uint8_t* rhs;
  size_t k;
  const float* scales;
  const float* biases;  // nullptr: zero biases
  int zero_point;
  int value(size_t i, size_t c) const {
    const int nibble = (rhs[i * ((k + 1) / 2) + c / 2] >> (4 * (c % 2))) & 0xf;
    return zero_point == 8 ? nibble - 8 : int4_value(nibble);
  }
  float scale(size_t i) const { return scales[i]; }
  float bias(size_t i) const { return biases ? biases[i] : 0.0f; }
};

// Panels of nr rows, rows n.. of the last panel repeating row n - 1 (KleidiAI's packers clamp
// the source row index): put(panel, r, c, q) stores a value; the tail gets sum_mul·Σq and
// scale_mul·scale.
template <class Source, class Put>
void pack_panels_repeating_last_row(size_t n, size_t k, size_t nr, size_t data_bytes, size_t panel_bytes, const Source& src,
                                    Put put, int32_t sum_mul, float scale_mul, void* rhs_packed) {
  for (size_t p0 = 0; p0 < n; p0 += nr) {
    uint8_t* panel = static_cast<uint8_t*>(rhs_packed) + p0 / nr * panel_bytes;
    for (size_t r = 0; r < nr; ++r) {
      const size_t row = p0 + r < n ? p0 + r : n - 1;
      int64_t sum = 0;  // stored modulo 2^32 (exact for k < 2^24)
      for (size_t c = 0; c < k; ++c) {
        const int q = src.value(row, c);
        put(panel, r, c, q);
        sum += q;
      }
      put_channel_tail(panel + data_bytes, nr, r, static_cast<int32_t>(sum) * sum_mul, src.scale(row) * scale_mul, src.bias(row));
    }
  }
}

// qsi8cxp: int8 at panel_index(nr, kr, r, c).
template <class Source>
void pack_qsi8cxp(size_t n, size_t k, size_t nr, size_t kr, const Source& src, void* rhs_packed) {
  auto put = [nr, kr](uint8_t* panel, size_t r, size_t c, int q) { panel[panel_index(nr, kr, r, c)] = static_cast<uint8_t>(q); };
  pack_panels_repeating_last_row(n, k, nr, qsi8cxp_data_bytes(nr, k), qsi8cxp_panel_bytes(nr, k), src, put, 1, 1.0f, rhs_packed);
}

// qsi4cxp (KleidiAI order, bl = kr/sr bytes per row chunk): sums ×16, scales ×1/16.
template <class Source>
void pack_qsi4cxp(size_t n, size_t k, size_t nr, size_t bl, const Source& src, void* rhs_packed) {
  auto put = [nr, bl](uint8_t* panel, size_t r, size_t c, int q) {
    panel[qsi4cxp_byte(nr, bl, r, c)] |= static_cast<uint8_t>((q & 0xf) << qsi4cxp_shift(c));
  };
  pack_panels_repeating_last_row(n, k, nr, qsi4cxp_data_bytes(nr, k), qsi4cxp_panel_bytes(nr, k), src, put, 16, 0.0625f,
                                 rhs_packed);
}

// qsi4cxps1s0 (sequential nibbles, kr-value chunks): plain sums and scales; rows n..(panel end)
// stay zero (KleidiAI's packer writes zeros there).
template <class Source>
void pack_qsi4cxps1s0(size_t n, size_t k, size_t nr, size_t kr, const Source& src, void* rhs_packed) {
  const size_t panel_bytes = qsi4cxp_panel_bytes(nr, k);
  for (size_t row = 0; row < n; ++row) {
    uint8_t* panel = static_cast<uint8_t*>(rhs_packed) + row / nr * panel_bytes;
    const size_t r = row % nr;
    int64_t sum = 0;
    for (size_t c = 0; c < k; ++c) {
      const int q = src.value(row, c);
      const size_t e = panel_index(nr, kr, r, c);
      panel[e / 2] |= static_cast<uint8_t>((q & 0xf) << (4 * (e % 2)));
      sum += q;
    }
    put_channel_tail(panel + qsi4cxp_data_bytes(nr, k), nr, r, static_cast<int32_t>(sum), src.scale(row), src.bias(row));
  }
}

}  // namespace qmm::layout
