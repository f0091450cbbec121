// The weight types: one table row per type (weight_types.cpp), read by everything that
// needs to know about types — the GGUF reader and writer, dequantization, quantization, model
// loading, the C API, the tools' type lists, help texts and error messages. A new type is its
// row there plus its row codecs; a type the kernels take as stored adds its packer, layout and
// kernels (docs/design.md, "How to add a weight type").
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace qmm {

// GGML type ids as they appear in GGUF files (TensorInfo::type); qc8 / qc4 are qmm's
// per-channel row formats (core/channels.h), numbered outside GGML's range: they never come
// from a GGUF file. The C API's QMM_TYPE_* (qmm/qmm.h) are the same numbers.
enum class WeightType : uint32_t {
  f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3, q5_0 = 6, q5_1 = 7, q8_0 = 8, q8_1 = 9, q2_k = 10, q3_k = 11,
  q4_k = 12, q5_k = 13, q6_k = 14, q8_k = 15, iq4_nl = 20, bf16 = 30, qc8 = 1024, qc4 = 1025
};

using RowToF32 = void (*)(const void* row, float* y, size_t k);      // row at 2-byte alignment
using RowFromF32 = void (*)(const float* x, void* row, size_t k);

struct TypeInfo {
  uint32_t id;              // the GGML id (a WeightType where qmm names it)
  const char* name;         // ggml's spelling ("q4_0", "q4_K"); type_name() is its lower case
  uint32_t block_len;       // values per block: 1 for f32 / f16 / bf16 and the per-channel rows
  uint32_t block_bytes;     // bytes per block; 0 for per-channel rows (row_bytes() has them)
  RowToF32 to_f32;          // one row -> F32; nullptr: qmm cannot read the type
  RowFromF32 from_f32;      // F32 -> one row; nullptr: qmm does not write it
  bool native;              // packers and kernels take it as stored (others are converted at load)
  int32_t llama_ftype;      // llama.cpp's LLAMA_FTYPE of a file all of this type; -1: none

  WeightType type() const { return static_cast<WeightType>(id); }
  bool per_channel() const { return block_bytes == 0; }  // qc8 / qc4: one scale per row, no GGUF type
  // A type `qmm quantize` / `synth` / `bench --type` / `--convert` can name (parse_type).
  bool target() const { return native && !per_channel(); }
};

std::span<const TypeInfo> type_table();        // in GGML id order, qc8 / qc4 last
const TypeInfo* find_type(uint32_t id);        // nullptr for an id of no known type
const TypeInfo& type_info(WeightType t);       // every WeightType has its row
const TypeInfo* find_type(const char* name);   // by name, any case ("Q4_K", "qc8"); nullptr if none

const char* type_name(WeightType t);                 // lower case: "q4_k"
bool parse_type(const char* name, WeightType* out);  // a target()'s name, any case ("Q4_K" too)
bool is_block_type(WeightType t);                    // a quantized type: k must be a multiple of block_len
bool is_channel_type(WeightType t);                  // qc8 / qc4: one scale per row, any k
size_t block_len(WeightType t);                      // weights per block: 1 (f32, f16), 32, 256 (K-quants)
size_t row_bytes(WeightType t, size_t k);            // bytes of one row of k elements (k valid)

// The lower-case names of the rows `pick` selects, in table order (flag choices, help texts).
std::vector<std::string> type_names(bool (*pick)(const TypeInfo&));
// "a, b or c" (upper: "A, B or C"), for help texts and errors.
std::string name_list(const std::vector<std::string>& names, bool upper = false);

// Any row with a codec -> F32 (2-byte aligned). Throws for a type qmm cannot read.
void dequantize_row(WeightType t, const void* row, float* y, size_t k);
// F32 rows -> n rows of type t of k values each. k must suit t; throws for a type qmm does not write.
void quantize_rows(WeightType t, const float* x, void* y, size_t n, size_t k);

}  // namespace qmm
