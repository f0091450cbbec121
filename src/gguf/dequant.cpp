#include "gguf/dequant.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"

namespace qmm::gguf {

namespace {

// A GGML type of the table (qmm's per-channel rows are no GGUF type), or nullptr.
const TypeInfo* traits(uint32_t type) {
  const TypeInfo* t = find_type(type);
  return t && !t->per_channel() ? t : nullptr;
}

}  // namespace

const char* ggml_type_name(uint32_t type) {
  const TypeInfo* t = traits(type);
  return t ? t->name : "unknown";
}

bool ggml_type_known(uint32_t type) { return traits(type) != nullptr; }

size_t ggml_block_size(uint32_t type) {
  const TypeInfo* t = traits(type);
  return t ? t->block_len : 0;
}

size_t ggml_type_size(uint32_t type) {
  const TypeInfo* t = traits(type);
  return t ? t->block_bytes : 0;
}

bool ggml_can_dequantize(uint32_t type) {
  const TypeInfo* t = traits(type);
  return t && t->to_f32;
}

size_t ggml_row_bytes(uint32_t type, uint64_t row_len) {
  const TypeInfo* t = traits(type);
  if (!t) fail(Status::unsupported, "unknown ggml type " + std::to_string(type));
  if (row_len % t->block_len != 0) {
    fail(Status::invalid_argument, std::string("row length ") + std::to_string(row_len) + " is not a multiple of the " +
                                       t->name + " block size " + std::to_string(t->block_len));
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(row_len / t->block_len, static_cast<uint64_t>(t->block_bytes), &bytes) ||
      bytes > static_cast<uint64_t>(SIZE_MAX)) {
    fail(Status::invalid_argument, std::string(t->name) + " row of " + std::to_string(row_len) + " values: size overflows");
  }
  return static_cast<size_t>(bytes);
}

void dequantize_rows(uint32_t type, const void* src, float* dst, size_t rows, size_t row_len) {
  if (!ggml_can_dequantize(type)) {
    fail(Status::unsupported, std::string("cannot dequantize ggml type ") + ggml_type_name(type) + " (" +
                                  std::to_string(type) + ")");
  }
  const RowToF32 to_f32 = traits(type)->to_f32;
  const size_t rb = ggml_row_bytes(type, row_len);
  const auto* in = static_cast<const uint8_t*>(src);
  // The codecs read 2-byte fields in place; a file with general.alignment 1 can put a row at
  // an odd address, so such a row is copied first.
  std::vector<uint16_t> aligned;
  for (size_t r = 0; r < rows; ++r, in += rb, dst += row_len) {
    const void* row = in;
    if (reinterpret_cast<uintptr_t>(in) % 2 != 0) {
      aligned.resize((rb + 1) / 2);
      std::memcpy(aligned.data(), in, rb);
      row = aligned.data();
    }
    to_f32(row, dst, row_len);
  }
}

}  // namespace qmm::gguf
