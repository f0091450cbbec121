// GGML tensor types: block sizes, row sizes, and rows of the common types -> F32.
// The dequantizers follow ggml's block formats bit-exactly (same formulas, same float order):
//   Q4_0  {f16 d; u8 qs[16]}                 x = (q - 8) * d
//   Q4_1  {f16 d, m; u8 qs[16]}              x = q * d + m
//   Q5_0  {f16 d; u8 qh[4]; u8 qs[16]}       x = (q | h << 4) - 16) * d
//   Q5_1  {f16 d, m; u8 qh[4]; u8 qs[16]}    x = (q | h << 4) * d + m
//   Q8_0  {f16 d; i8 qs[32]}                 x = q * d
//   Q4_K  {f16 d, dmin; u8 scales[12]; u8 qs[128]}             256 values, 8 sub-blocks of 32
//   Q6_K  {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}        256 values, 16 sub-blocks of 16
//   BF16  the upper half of an F32
#pragma once
#include <cstddef>
#include <cstdint>

namespace qmm::gguf {

// GGML type ids as stored in GGUF files.
enum GgmlType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ8_1 = 9,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kQ8_K = 15, kIQ4_NL = 20, kBF16 = 30
};

const char* ggml_type_name(uint32_t type);   // ggml's spelling ("q4_0", "q6_K"); "unknown" if unknown
bool ggml_type_known(uint32_t type);         // a type of ggml's table (stored sizes known)
size_t ggml_block_size(uint32_t type);       // values per block (1 for F32/F16/BF16); 0 if unknown
size_t ggml_type_size(uint32_t type);        // bytes per block; 0 if unknown
bool ggml_can_dequantize(uint32_t type);     // dequantize_rows supports it

// Bytes of one row of row_len values; throws if the type is unknown, row_len is not a
// multiple of the block size, or the size overflows.
size_t ggml_row_bytes(uint32_t type, uint64_t row_len);

// `rows` rows of `row_len` values of any supported type (F32, F16, BF16, Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_NL), stored back to back, -> F32. Throws for other types.
void dequantize_rows(uint32_t type, const void* src, float* dst, size_t rows, size_t row_len);

}  // namespace qmm::gguf
