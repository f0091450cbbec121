// Element accessors for the packed layouts of DESIGN.md §5, written as plainly as possible.
// The scalar kernels compute through them, so they are the executable form of the spec.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/blocks.h"
#include "core/fp16.h"

namespace qmm::layout {

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// qsi8d32p: one panel of mr rows. int8 of (row r, column c) at (c/kr)·mr·kr + r·kr + c%kr;
// after all data, the f16 scale of (block b, row r) at index b·mr + r.
inline size_t qsi8d32p_panel_bytes(size_t mr, size_t k) { return mr * (k / kBlock) * (kBlock + 2); }
inline int8_t qsi8d32p_value(const uint8_t* panel, size_t mr, size_t kr, size_t r, size_t c) {
  return static_cast<int8_t>(panel[(c / kr) * mr * kr + r * kr + c % kr]);
}
inline float qsi8d32p_scale(const uint8_t* panel, size_t mr, size_t k, size_t r, size_t b) {
  return fp16_to_fp32(load_u16(panel + mr * k + (b * mr + r) * 2));
}

// qsi4c32ps1s0scalef16: one panel of nr rows. For block b, quad q (4 elements) and row r,
// a little-endian u16 at u16-index (b·8 + q)·nr + r holds elements b·32 + 4q + i in bits
// [4i+3 : 4i], unsigned (zero point 8); then the f16 d of (block b, row r) at index b·nr + r.
inline size_t qsi4c32ps1s0_panel_bytes(size_t nr, size_t k) { return nr * (k / kBlock) * (kBlock / 2 + 2); }
inline int qsi4c32ps1s0_value(const uint8_t* panel, size_t nr, size_t r, size_t c) {
  const size_t b = c / kBlock, q = (c % kBlock) / 4, i = c % 4;
  const uint16_t v = load_u16(panel + ((b * 8 + q) * nr + r) * 2);
  return static_cast<int>((v >> (4 * i)) & 0xf) - 8;
}
inline float qsi4c32ps1s0_scale(const uint8_t* panel, size_t nr, size_t k, size_t r, size_t b) {
  return fp16_to_fp32(load_u16(panel + nr * k / 2 + (b * nr + r) * 2));
}

// qsi8c32pscalef16: one panel of nr rows. int8 of (row r, column c) at (c/kr)·nr·kr + r·kr + c%kr;
// then the f16 d of (block b, row r) at index b·nr + r.
inline size_t qsi8c32p_panel_bytes(size_t nr, size_t k) { return nr * (k / kBlock) * (kBlock + 2); }
inline int qsi8c32p_value(const uint8_t* panel, size_t nr, size_t kr, size_t r, size_t c) {
  return static_cast<int8_t>(panel[(c / kr) * nr * kr + r * kr + c % kr]);
}
inline float qsi8c32p_scale(const uint8_t* panel, size_t nr, size_t k, size_t r, size_t b) {
  return fp16_to_fp32(load_u16(panel + nr * k + (b * nr + r) * 2));
}

// f32p / f16p: one panel of nr rows, k rounded up to kr; element (r, c) at (c/kr)·nr·kr + r·kr + c%kr.
inline size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }
inline size_t panel_index(size_t nr, size_t kr, size_t r, size_t c) { return (c / kr) * nr * kr + r * kr + c % kr; }

}  // namespace qmm::layout
