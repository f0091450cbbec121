// GGUF block formats, bit-exact with ggml (docs/design.md §5), and ggml's row quantizers.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/weight_types.h"

namespace qmm {

constexpr size_t kBlock = 32;  // weights per Q4_0 / Q8_0 block

// Q4_0: element j (0..15) is the low nibble of qs[j], element j+16 its high nibble;
// value = (nibble - 8) * d.  In qmm's grammar: qsu4c32s16s0, zero point 8.
struct BlockQ4_0 {
  uint16_t d;  // f16 scale
  uint8_t qs[kBlock / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// Q8_0: value = qs[j] * d.
struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t qs[kBlock];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q5_0 / Q5_1 (ggml's legacy 5-bit blocks): element j (0..15) is the low nibble of qs[j],
// element j + 16 its high nibble, bit 4 of element e is bit e of qh (little-endian u32).
// Q5_0 value = (q − 16)·d; Q5_1 value = q·d + m. No kernel reads them (they are converted at
// load); qmm writes them where llama.cpp's K-quant mixes do (rows not a multiple of 256).
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kBlock / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

// Q4_1: element j (0..15) is the low nibble of qs[j], element j + 16 its high nibble;
// value = q·d + m. Read only.
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[kBlock / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[kBlock / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// True when x[0..31] are all finite (no NaN, no ±Inf).
inline bool block_is_finite(const float* x) {
  bool finite = true;
  for (size_t j = 0; j < kBlock; ++j) finite &= x[j] - x[j] == 0.0f;  // NaN for NaN and ±Inf
  return finite;
}

// ggml's reference quantizers (quantize_row_q4_0_ref / _q8_0_ref rounding). k % 32 == 0.
// The NaN policy (include/qmm/qmm.h): a block holding NaN or ±Inf, or whose scale d rounds to
// Inf in binary16, gets d = NaN (kFp16NaN) and all-zero values, so it dequantizes to NaN
// (ggml would store an Inf d and convert NaN to int: undefined behaviour).
void quantize_row_q4_0(const float* x, BlockQ4_0* y, size_t k);
void quantize_row_q8_0(const float* x, BlockQ8_0* y, size_t k);
// ggml's quantize_row_q5_0_ref / _q5_1_ref, with the same NaN policy (a Q5_1 block whose min
// m is not finite in binary16 is poisoned too: d = m = NaN).
void quantize_row_q5_0(const float* x, BlockQ5_0* y, size_t k);
void quantize_row_q5_1(const float* x, BlockQ5_1* y, size_t k);
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, size_t k);
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, size_t k);
// The types qmm only reads (converted at load): ggml's dequantizers.
void dequantize_row_q4_1(const BlockQ4_1* x, float* y, size_t k);
void dequantize_row_q5_0(const BlockQ5_0* x, float* y, size_t k);
void dequantize_row_q5_1(const BlockQ5_1* x, float* y, size_t k);
void dequantize_row_bf16(const uint16_t* x, float* y, size_t k);  // BF16: the upper half of an F32

}  // namespace qmm
