// GGML tensor types of GGUF files, as core/weight_types.h's table has them: names, block
// sizes, row sizes, and rows of every type qmm reads -> F32 (the table's codecs, on rows at
// any alignment).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/weight_types.h"

namespace qmm::gguf {

// Short names for the GGML ids of TensorInfo::type (a plain uint32_t: a file may hold any id).
constexpr uint32_t ggml_id(WeightType t) { return static_cast<uint32_t>(t); }
inline constexpr uint32_t kF32 = ggml_id(WeightType::f32), kF16 = ggml_id(WeightType::f16),
                          kBF16 = ggml_id(WeightType::bf16), kQ4_0 = ggml_id(WeightType::q4_0),
                          kQ4_1 = ggml_id(WeightType::q4_1), kQ5_0 = ggml_id(WeightType::q5_0),
                          kQ5_1 = ggml_id(WeightType::q5_1), kQ8_0 = ggml_id(WeightType::q8_0),
                          kQ8_1 = ggml_id(WeightType::q8_1), kQ3_K = ggml_id(WeightType::q3_k),
                          kQ4_K = ggml_id(WeightType::q4_k), kQ5_K = ggml_id(WeightType::q5_k),
                          kQ6_K = ggml_id(WeightType::q6_k), kIQ4_NL = ggml_id(WeightType::iq4_nl);

const char* ggml_type_name(uint32_t type);   // ggml's spelling ("q4_0", "q6_K"); "unknown" if unknown
bool ggml_type_known(uint32_t type);         // a type of ggml's table (stored sizes known)
size_t ggml_block_size(uint32_t type);       // values per block (1 for F32/F16/BF16); 0 if unknown
size_t ggml_type_size(uint32_t type);        // bytes per block; 0 if unknown
bool ggml_can_dequantize(uint32_t type);     // dequantize_rows supports it

// Bytes of one row of row_len values; throws if the type is unknown, row_len is not a
// multiple of the block size, or the size overflows.
size_t ggml_row_bytes(uint32_t type, uint64_t row_len);

// `rows` rows of `row_len` values of any type with a codec (ggml_can_dequantize), stored back
// to back, -> F32. Throws for other types.
void dequantize_rows(uint32_t type, const void* src, float* dst, size_t rows, size_t row_len);

}  // namespace qmm::gguf
