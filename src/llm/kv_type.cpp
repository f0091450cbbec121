#include "llm/kv_type.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/blocks.h"
#include "core/fp16.h"
#include "llm/vector_clones.h"

namespace qmm::llm {

namespace {
constexpr KvType kTypes[] = {KvType::f32, KvType::f16, KvType::q8_0, KvType::q4_0};
}  // namespace

const char* kv_type_name(KvType t) {
  switch (t) {
    case KvType::f32: return "f32";
    case KvType::f16: return "f16";
    case KvType::q8_0: return "q8_0";
    case KvType::q4_0: return "q4_0";
  }
  return "?";
}

std::optional<KvType> parse_kv_type(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (KvType t : kTypes) {
    if (lower == kv_type_name(t)) return t;
  }
  return std::nullopt;
}

std::string kv_type_names() {
  std::string r;
  for (KvType t : kTypes) r += (r.empty() ? "" : ", ") + std::string(kv_type_name(t));
  return r;
}

size_t kv_row_bytes(KvType t, size_t n) {
  switch (t) {
    case KvType::f32: return n * sizeof(float);
    case KvType::f16: return n * sizeof(uint16_t);
    case KvType::q8_0: return n / kBlock * sizeof(BlockQ8_0);
    case KvType::q4_0: return n / kBlock * sizeof(BlockQ4_0);
  }
  return 0;
}

bool kv_fits(KvType t, size_t n) { return !kv_rotated(t) || n % kBlock == 0; }

size_t kv_rotation_len(size_t n) { return std::min<size_t>(n & (~n + 1), 256); }

QMM_VECTOR_CLONES
void kv_rotate(float* x, size_t n) {
  const size_t len = kv_rotation_len(n);
  const float scale = 1.0f / std::sqrt(static_cast<float>(len));
  for (float* b = x; b < x + n; b += len) {
    for (size_t h = 1; h < len; h *= 2) {  // butterflies of the fast Walsh-Hadamard transform
      for (size_t i = 0; i < len; i += 2 * h) {
        for (size_t j = i; j < i + h; ++j) {
          const float u = b[j], v = b[j + h];
          b[j] = u + v;
          b[j + h] = u - v;
        }
      }
    }
    for (size_t i = 0; i < len; ++i) b[i] *= scale;
  }
}

void kv_store(KvType t, const float* x, uint8_t* row, size_t n) {
  switch (t) {
    case KvType::f32: std::memcpy(row, x, n * sizeof(float)); return;
    case KvType::f16: fp32_to_fp16_row(x, reinterpret_cast<uint16_t*>(row), n); return;
    case KvType::q8_0: quantize_row_q8_0(x, reinterpret_cast<BlockQ8_0*>(row), n); return;
    case KvType::q4_0: quantize_row_q4_0(x, reinterpret_cast<BlockQ4_0*>(row), n); return;
  }
}

QMM_VECTOR_CLONES
void kv_load(KvType t, const uint8_t* rows, size_t row_stride, size_t count, float* out, size_t n) {
  if (row_stride == kv_row_bytes(t, n)) {  // back-to-back rows (a ring's piece): one long row, one call
    n *= count;
    count = 1;
  }
  for (size_t i = 0; i < count; ++i, rows += row_stride, out += n) {
    switch (t) {
      case KvType::f32: std::memcpy(out, rows, n * sizeof(float)); break;
      case KvType::f16: fp16_to_fp32_row(reinterpret_cast<const uint16_t*>(rows), out, n); break;
      case KvType::q8_0:
        for (size_t b = 0; b < n / kBlock; ++b) {  // (a plain loop over the int8 in place: GCC vectorizes it)
          const uint8_t* blk = rows + b * sizeof(BlockQ8_0);
          uint16_t dh;
          std::memcpy(&dh, blk, sizeof dh);
          const float d = fp16_to_fp32(dh);
          const auto* qs = reinterpret_cast<const int8_t*>(blk + offsetof(BlockQ8_0, qs));
          for (size_t j = 0; j < kBlock; ++j) out[b * kBlock + j] = d * static_cast<float>(qs[j]);
        }
        break;
      case KvType::q4_0:
        for (size_t b = 0; b < n / kBlock; ++b) {
          const uint8_t* blk = rows + b * sizeof(BlockQ4_0);
          uint16_t dh;
          std::memcpy(&dh, blk, sizeof dh);
          const float d = fp16_to_fp32(dh);
          const uint8_t* qs = blk + offsetof(BlockQ4_0, qs);
          for (size_t j = 0; j < kBlock / 2; ++j) out[b * kBlock + j] = d * static_cast<float>((qs[j] & 0xf) - 8);
          for (size_t j = 0; j < kBlock / 2; ++j) out[b * kBlock + j + kBlock / 2] = d * static_cast<float>((qs[j] >> 4) - 8);
        }
        break;
    }
  }
}

}  // namespace qmm::llm
