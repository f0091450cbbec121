// lhs_quant_pack_bf16p16x32_f32: F32 activations -> BF16, the AMX-BF16 GEMMs' LHS
// (matmul_clamp_f32_bf16p16x32_*_amxbf16_tdpbf16ps). No scales, no sums: the value rounded.
//
// Rounding (bf16_from_f32 below): to nearest even, as VCVTNEPS2BF16 does; a zero or F32
// denormal becomes a signed zero (the tile unit treats BF16 denormals as zero anyway); a NaN
// or ±Inf becomes NaN, so a non-finite activation makes its whole output row NaN, as the
// quantizing packers' NaN block scale does (kernels/ukernel.h's NaN policy). A finite value
// within half a BF16 step of FLT_MAX rounds to Inf, as the instruction's does.
//
// Layout, one panel of mr rows (mr 16 for the kernels; kr and sr unused), 32-block major:
//   block b of the panel starts at byte b·mr·64; row r's 32 BF16 of the block at b·mr·64 + 64·r
//   (an mr = 16 block is the 16 x 64-byte A tile of a tdpbf16ps, loaded as it lies)
//   panel bytes mr·k·2; rows beyond m in the last panel are zero. k is a multiple of 32.
//
// Two packers write the layout byte for byte:
//   lhs_quant_pack_bf16p16x32_f32_ref     plain C++ (the tests' reference)
//   lhs_quant_pack_bf16p16x32_f32_avx512  AVX-512 (the kernels'; its reference is the plain one)
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/ukernel.h"

namespace qmm {

namespace bf16p {
inline size_t panel_bytes(size_t mr, size_t k) { return mr * k * 2; }
size_t packed_size(size_t m, size_t k, size_t mr, size_t kr, size_t sr);
size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t kr, size_t sr);

// The BF16 bits of x (rounding above).
inline uint16_t bf16_from_f32(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  const uint32_t exp = b & 0x7f800000u;
  if (exp == 0x7f800000u) return 0x7fc0;                          // NaN, ±Inf -> NaN
  if (exp == 0) return static_cast<uint16_t>((b >> 16) & 0x8000);  // zero, denormal -> ±0
  return static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
inline float f32_from_bf16(uint16_t h) {
  const uint32_t b = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}
}  // namespace bf16p

extern const LhsPacker lhs_quant_pack_bf16p16x32_f32_ref;
extern const LhsPacker lhs_quant_pack_bf16p16x32_f32_avx512;

}  // namespace qmm
