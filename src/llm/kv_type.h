// The element types of the KV cache (llama.cpp's -ctk / -ctv): how one position of one K/V head
// (head_dim values) is stored, written and read back. F16 is the default (half F32's bytes,
// what llama.cpp holds); Q8_0 and Q4_0 are ggml's blocks of 32 (head_dim % 32 == 0).
//
// Quantized keys are rotated: each head's key is multiplied by a normalized Walsh-Hadamard
// matrix H (blocks of kv_rotation_len(head_dim), H·Hᵀ = I) before it is quantized, and every
// query by the same H before it meets the keys, so q·k = (Hq)·(Hk) in exact arithmetic while
// the rotation spreads a few outlier channels over the block before the per-block scale is
// chosen (docs/design.md §7, "KV cache"). Values are not rotated.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qmm::llm {

enum class KvType : uint8_t { f32, f16, q8_0, q4_0 };

struct KvTypes {
  KvType k = KvType::f16;
  KvType v = KvType::f16;
};

const char* kv_type_name(KvType t);                       // "f32", "f16", "q8_0", "q4_0"
std::optional<KvType> parse_kv_type(std::string_view s);  // kv_type_name's spelling, any case
std::string kv_type_names();                              // "f32, f16, q8_0, q4_0"
size_t kv_row_bytes(KvType t, size_t head_dim);            // bytes of one position of one head
bool kv_fits(KvType t, size_t head_dim);                   // q8_0 / q4_0 need head_dim % 32 == 0
inline bool kv_rotated(KvType t) { return t == KvType::q8_0 || t == KvType::q4_0; }

// The length of the Hadamard blocks for a head: the largest power of two dividing head_dim
// (at most 256), so a 128-wide head is rotated as a whole and a 96-wide one in three blocks of 32.
size_t kv_rotation_len(size_t head_dim);
// x[0..n) = H·x in place for each block of kv_rotation_len(n) (the transform is its own inverse).
void kv_rotate(float* x, size_t n);

// Stores one head's n values as one cache row of type t (x is not changed).
void kv_store(KvType t, const float* x, uint8_t* row, size_t n);
// Reads `count` cache rows of type t (row i at rows + i·row_stride bytes) as F32 into out[i·n + j].
void kv_load(KvType t, const uint8_t* rows, size_t row_stride, size_t count, float* out, size_t n);

}  // namespace qmm::llm
