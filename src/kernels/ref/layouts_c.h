// Element accessors for the per-channel family's packed layouts (KleidiAI's qai8dxp / qsi8cxp /
// qsi4cxp panel structure). The scalar kernels compute through them: the executable spec.
// K is padded to kc_padded(k) = round_up(k, 32) with zero values, as KleidiAI does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/ref/layouts.h"

namespace qmm::layout {

inline size_t kc_padded(size_t k) { return round_up(k, 32); }

inline int32_t load_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline float load_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// qai8dxp: one panel of mr rows: int8 of (row r, column c) at (c/kc)·mr·kc + r·kc + c%kc with
// kc = kr/sr; then mr int32 negated zero points; then mr f32 scales. Panel bytes mr·(K + 8).
// Columns k..K-1 hold the quantized x[k-1] (KleidiAI's padding), not zero: kernels must pair
// them with zero weights, which every RHS layout here stores there.
inline size_t qai8dxp_panel_bytes(size_t mr, size_t k) { return mr * (kc_padded(k) + 8); }
inline int qai8dxp_value(const uint8_t* panel, size_t mr, size_t kc, size_t r, size_t c) {
  return static_cast<int8_t>(panel[panel_index(mr, kc, r, c)]);
}
inline int32_t qai8dxp_neg_zero_point(const uint8_t* panel, size_t mr, size_t k, size_t r) {
  return load_i32(panel + mr * kc_padded(k) + r * 4);
}
inline float qai8dxp_scale(const uint8_t* panel, size_t mr, size_t k, size_t r) {
  return load_f32(panel + mr * (kc_padded(k) + 4) + r * 4);
}

// The RHS panels of nr rows end alike: nr int32 row sums (Σ_c q), nr f32 scales, nr f32 biases.
inline int32_t channel_row_sum(const uint8_t* tail, size_t r) { return load_i32(tail + r * 4); }
inline float channel_scale(const uint8_t* tail, size_t nr, size_t r) { return load_f32(tail + (nr + r) * 4); }
inline float channel_bias(const uint8_t* tail, size_t nr, size_t r) { return load_f32(tail + (2 * nr + r) * 4); }

// qsi8cxp: int8 of (row r, column c) at (c/kr)·nr·kr + r·kr + c%kr, then the tail. Panel bytes nr·(K + 12).
inline size_t qsi8cxp_data_bytes(size_t nr, size_t k) { return nr * kc_padded(k); }
inline size_t qsi8cxp_panel_bytes(size_t nr, size_t k) { return qsi8cxp_data_bytes(nr, k) + nr * 12; }
inline int qsi8cxp_value(const uint8_t* panel, size_t nr, size_t kr, size_t r, size_t c) {
  return static_cast<int8_t>(panel[panel_index(nr, kr, r, c)]);
}

// qsi4cxps1s0 (KleidiAI's rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0): element (row r, column c) at
// e = (c/kr)·nr·kr + r·kr + c%kr in byte e/2, low nibble for even e, signed int4 (two's
// complement); then the tail (plain Σq, s, bias). Panel bytes nr·(K/2 + 12).
inline size_t qsi4cxp_data_bytes(size_t nr, size_t k) { return nr * kc_padded(k) / 2; }
inline size_t qsi4cxp_panel_bytes(size_t nr, size_t k) { return qsi4cxp_data_bytes(nr, k) + nr * 12; }
inline int int4_value(int nibble) { return nibble >= 8 ? nibble - 16 : nibble; }
inline int qsi4cxps1s0_value(const uint8_t* panel, size_t nr, size_t kr, size_t r, size_t c) {
  const size_t e = panel_index(nr, kr, r, c);
  return int4_value((panel[e / 2] >> (4 * (e % 2))) & 0xf);
}

// qsi4cxp (KleidiAI's rhs_pack_nxk_qsi4cxp_qs4cxs1s0): each row's K/2 bytes in 32-column groups
// of 16 bytes, byte j of the row holding column 32·(j/16) + j%16 in its low nibble and column
// 32·(j/16) + j%16 + 16 in its high nibble (signed int4); the rows interleaved in chunks of
// bl = kr/sr bytes: byte j of row r at (j/bl)·nr·bl + r·bl + j%bl. Then the tail with the row
// sum stored ×16 and the scale ×1/16: kernels multiply with the nibble in the high half of a
// byte (16·q: LSL #4 for the low nibble, AND 0xF0 for the high one). Panel bytes nr·(K/2 + 12).
inline size_t qsi4cxp_byte(size_t nr, size_t bl, size_t r, size_t c) {
  const size_t j = c / 32 * 16 + c % 16;
  return j / bl * nr * bl + r * bl + j % bl;
}
inline unsigned qsi4cxp_shift(size_t c) { return c % 32 >= 16 ? 4 : 0; }

}  // namespace qmm::layout

namespace qmm::layout {

// Writes row r's tail entries (row sum, scale, bias) into a panel's tail.
inline void put_channel_tail(uint8_t* tail, size_t nr, size_t r, int32_t row_sum, float scale, float bias) {
  std::memcpy(tail + r * 4, &row_sum, 4);
  std::memcpy(tail + (nr + r) * 4, &scale, 4);
  std::memcpy(tail + (2 * nr + r) * 4, &bias, 4);
}

}  // namespace qmm::layout

namespace qmm::layout {

// The NaN policy (kernels/ukernel.h): a channel scale that is not finite is stored as NaN.
inline float scale_or_nan(float s) { return s - s == 0.0f ? s : std::numeric_limits<float>::quiet_NaN(); }

}  // namespace qmm::layout
