// Element accessors for the packed layouts of docs/design.md §5, written as plainly as possible.
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

// qsi8d32pscalef16 (KleidiAI's kai_lhs_quant_pack_qsi8d32p_f32 layout, the NEON kernels' LHS):
// one panel of mr rows, block after block, each mr·34 bytes: first the mr f16 scales (row r at
// index r), then the block's 32 columns in chunks of kc = kr/sr columns, rows interleaved: the
// int8 of (row r, column j of the block) at byte mr·2 + (j/kc)·mr·kc + r·kc + j%kc.
inline size_t qsi8d32pscalef16_panel_bytes(size_t mr, size_t k) { return mr * (k / kBlock) * (kBlock + 2); }
inline int8_t qsi8d32pscalef16_value(const uint8_t* panel, size_t mr, size_t kc, size_t r, size_t c) {
  const uint8_t* blk = panel + (c / kBlock) * mr * (kBlock + 2) + mr * 2;
  const size_t j = c % kBlock;
  return static_cast<int8_t>(blk[(j / kc) * mr * kc + r * kc + j % kc]);
}
inline float qsi8d32pscalef16_scale(const uint8_t* panel, size_t mr, size_t r, size_t b) {
  return fp16_to_fp32(load_u16(panel + b * mr * (kBlock + 2) + r * 2));
}

// qsi4c32pscalef16 (KleidiAI's kai_rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0 layout, the NEON
// kernels' Q4_0 RHS): one panel of nr rows, block after block, each nr·18 bytes: first the nr f16
// scales (row r at index r), then the block's 16 GGUF bytes in segments of kr/2 bytes, rows
// interleaved: byte i of segment s of row r at nr·2 + (s·nr + r)·(kr/2) + i, holding the GGUF byte
// qs[s·kr/2 + i] XOR 0x88 (low nibble: element s·kr/2 + i, high nibble: element 16 + s·kr/2 + i),
// so each nibble is the signed int4 value (nibble - 8 of the GGUF byte).
inline size_t qsi4c32pscalef16_panel_bytes(size_t nr, size_t k) { return nr * (k / kBlock) * (kBlock / 2 + 2); }
inline int qsi4c32pscalef16_value(const uint8_t* panel, size_t nr, size_t kr, size_t r, size_t c) {
  const uint8_t* blk = panel + (c / kBlock) * nr * (kBlock / 2 + 2) + nr * 2;
  const size_t j = c % kBlock, byte = j % 16, seg_bytes = kr / 2;
  const uint8_t v = blk[(byte / seg_bytes * nr + r) * seg_bytes + byte % seg_bytes];
  const int nibble = j < 16 ? v & 0xf : v >> 4;
  return nibble >= 8 ? nibble - 16 : nibble;
}
inline float qsi4c32pscalef16_scale(const uint8_t* panel, size_t nr, size_t r, size_t b) {
  return fp16_to_fp32(load_u16(panel + b * nr * (kBlock / 2 + 2) + r * 2));
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
