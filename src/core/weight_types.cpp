#include "core/weight_types.h"

#include <array>
#include <cctype>
#include <cstring>
#include <strings.h>
#include <vector>

#include "core/blocks.h"
#include "core/channels.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/kquants.h"

namespace qmm {

namespace {

// The typed row codecs of blocks.h / kquants.h / channels.h / fp16.h behind one signature.
template <class B, void (*F)(const B*, float*, size_t)>
void to_f32(const void* row, float* y, size_t k) { F(static_cast<const B*>(row), y, k); }
template <class B, void (*F)(const float*, B*, size_t)>
void from_f32(const float* x, void* row, size_t k) { F(x, static_cast<B*>(row), k); }

void f32_to_f32(const void* row, float* y, size_t k) { std::memcpy(y, row, k * 4); }
void f32_from_f32(const float* x, void* row, size_t k) { std::memcpy(row, x, k * 4); }
void qc8_from_f32(const float* x, void* row, size_t k) { quantize_row_qc8(x, 0.0f, static_cast<uint8_t*>(row), k); }
void qc4_from_f32(const float* x, void* row, size_t k) { quantize_row_qc4(x, 0.0f, static_cast<uint8_t*>(row), k); }

constexpr uint32_t kSuper = static_cast<uint32_t>(kSuperBlock), kQ = static_cast<uint32_t>(kBlock);

// ggml's type table (ids as in GGUF files; its removed ids 4, 5, 31-33, 36-38 are absent), then
// qmm's per-channel rows. {id, name, values and bytes per block, the codecs where qmm reads /
// writes the type, whether the kernels take it as stored, llama.cpp's ftype}.
constexpr TypeInfo kTypes[] = {
    {0, "f32", 1, 4, f32_to_f32, f32_from_f32, true, 0},
    {1, "f16", 1, 2, to_f32<uint16_t, fp16_to_fp32_row>, from_f32<uint16_t, fp32_to_fp16_row>, true, 1},
    {2, "q4_0", kQ, sizeof(BlockQ4_0), to_f32<BlockQ4_0, dequantize_row_q4_0>, from_f32<BlockQ4_0, quantize_row_q4_0>, true, 2},
    {3, "q4_1", kQ, sizeof(BlockQ4_1), to_f32<BlockQ4_1, dequantize_row_q4_1>, nullptr, false, 3},
    {6, "q5_0", kQ, sizeof(BlockQ5_0), to_f32<BlockQ5_0, dequantize_row_q5_0>, from_f32<BlockQ5_0, quantize_row_q5_0>, false, 8},
    {7, "q5_1", kQ, sizeof(BlockQ5_1), to_f32<BlockQ5_1, dequantize_row_q5_1>, from_f32<BlockQ5_1, quantize_row_q5_1>, false, 9},
    {8, "q8_0", kQ, sizeof(BlockQ8_0), to_f32<BlockQ8_0, dequantize_row_q8_0>, from_f32<BlockQ8_0, quantize_row_q8_0>, true, 7},
    {9, "q8_1", 32, 36, nullptr, nullptr, false, -1},
    {10, "q2_K", 256, 84, nullptr, nullptr, false, -1},
    {11, "q3_K", 256, 110, nullptr, nullptr, false, -1},
    // Q4_K / Q5_K: a file all of one is llama.cpp's _S (the _M mixes are gguf/quantize.h's).
    {12, "q4_K", kSuper, sizeof(BlockQ4_K), to_f32<BlockQ4_K, dequantize_row_q4_k>, from_f32<BlockQ4_K, quantize_row_q4_k>, true, 14},
    {13, "q5_K", kSuper, sizeof(BlockQ5_K), to_f32<BlockQ5_K, dequantize_row_q5_k>, from_f32<BlockQ5_K, quantize_row_q5_k>, true, 16},
    {14, "q6_K", kSuper, sizeof(BlockQ6_K), to_f32<BlockQ6_K, dequantize_row_q6_k>, from_f32<BlockQ6_K, quantize_row_q6_k>, true, 18},
    {15, "q8_K", 256, 292, nullptr, nullptr, false, -1},
    {16, "iq2_xxs", 256, 66, nullptr, nullptr, false, -1},
    {17, "iq2_xs", 256, 74, nullptr, nullptr, false, -1},
    {18, "iq3_xxs", 256, 98, nullptr, nullptr, false, -1},
    {19, "iq1_s", 256, 50, nullptr, nullptr, false, -1},
    {20, "iq4_nl", kQ, sizeof(BlockIQ4_NL), to_f32<BlockIQ4_NL, dequantize_row_iq4_nl>, from_f32<BlockIQ4_NL, quantize_row_iq4_nl>, true, 25},
    {21, "iq3_s", 256, 110, nullptr, nullptr, false, -1},
    {22, "iq2_s", 256, 82, nullptr, nullptr, false, -1},
    {23, "iq4_xs", 256, 136, nullptr, nullptr, false, -1},
    {24, "i8", 1, 1, nullptr, nullptr, false, -1},
    {25, "i16", 1, 2, nullptr, nullptr, false, -1},
    {26, "i32", 1, 4, nullptr, nullptr, false, -1},
    {27, "i64", 1, 8, nullptr, nullptr, false, -1},
    {28, "f64", 1, 8, nullptr, nullptr, false, -1},
    {29, "iq1_m", 256, 56, nullptr, nullptr, false, -1},
    {30, "bf16", 1, 2, to_f32<uint16_t, dequantize_row_bf16>, nullptr, false, 32},
    {34, "tq1_0", 256, 54, nullptr, nullptr, false, -1},
    {35, "tq2_0", 256, 66, nullptr, nullptr, false, -1},
    {39, "mxfp4", 32, 17, nullptr, nullptr, false, -1},
    {1024, "qc8", 1, 0, to_f32<uint8_t, dequantize_row_qc8>, qc8_from_f32, true, -1},
    {1025, "qc4", 1, 0, to_f32<uint8_t, dequantize_row_qc4>, qc4_from_f32, true, -1},
};

// type_name()'s lower-case spellings, one per row.
struct LowerNames {
  std::array<std::array<char, 8>, std::size(kTypes)> names{};
  LowerNames() {
    for (size_t i = 0; i < std::size(kTypes); ++i) {
      for (size_t j = 0; kTypes[i].name[j] && j + 1 < names[i].size(); ++j) {
        names[i][j] = static_cast<char>(std::tolower(static_cast<unsigned char>(kTypes[i].name[j])));
      }
    }
  }
};

}  // namespace

std::span<const TypeInfo> type_table() { return kTypes; }

const TypeInfo* find_type(uint32_t id) {
  for (const TypeInfo& t : kTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

const TypeInfo* find_type(const char* name) {
  for (const TypeInfo& t : kTypes) {
    if (strcasecmp(name, t.name) == 0) return &t;
  }
  return nullptr;
}

const TypeInfo& type_info(WeightType t) { return *find_type(static_cast<uint32_t>(t)); }

const char* type_name(WeightType t) {
  static const LowerNames lower;
  const TypeInfo* info = find_type(static_cast<uint32_t>(t));
  return info ? lower.names[static_cast<size_t>(info - kTypes)].data() : "?";
}

bool parse_type(const char* name, WeightType* out) {
  const TypeInfo* t = find_type(name);
  if (!t || !t->target()) return false;
  *out = t->type();
  return true;
}

bool is_block_type(WeightType t) { return block_len(t) > 1; }

bool is_channel_type(WeightType t) { return type_info(t).per_channel(); }

size_t block_len(WeightType t) { return type_info(t).block_len; }

size_t row_bytes(WeightType t, size_t k) {
  switch (t) {
    case WeightType::qc8: return qc8_row_bytes(k);
    case WeightType::qc4: return qc4_row_bytes(k);
    default: {
      const TypeInfo& info = type_info(t);
      return k / info.block_len * info.block_bytes;
    }
  }
}

std::vector<std::string> type_names(bool (*pick)(const TypeInfo&)) {
  std::vector<std::string> names;
  for (const TypeInfo& t : kTypes) {
    if (pick(t)) names.emplace_back(type_name(t.type()));
  }
  return names;
}

std::string name_list(const std::vector<std::string>& names, bool upper) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : i + 1 == names.size() ? " or " : ", ";
    for (char c : names[i]) out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
  }
  return out;
}

void dequantize_row(WeightType t, const void* row, float* y, size_t k) {
  const TypeInfo* info = find_type(static_cast<uint32_t>(t));
  if (!info || !info->to_f32) fail(Status::unsupported, std::string("qmm cannot read weight type ") + type_name(t));
  info->to_f32(row, y, k);
}

void quantize_rows(WeightType t, const float* x, void* y, size_t n, size_t k) {
  const TypeInfo* info = find_type(static_cast<uint32_t>(t));
  if (!info || !info->from_f32) fail(Status::unsupported, std::string("qmm cannot write weight type ") + type_name(t));
  auto* out = static_cast<uint8_t*>(y);
  const size_t rb = row_bytes(t, k);
  for (size_t i = 0; i < n; ++i, x += k, out += rb) info->from_f32(x, out, k);
}

}  // namespace qmm
