// libFuzzer target of the GGUF reader: any input must parse or throw qmm::Error — no crash,
// no sanitizer report, no huge allocation (run with -rss_limit_mb / -malloc_limit_mb). A file
// that parses is read the way a model loader reads it.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "gguf/gguf.h"

namespace {

void read_everything(const qmm::gguf::File& f) {
  using qmm::gguf::ValueType;
  for (std::string_view k : f.keys()) {
    (void)f.value_to_string(k);
    (void)f.raw_value(k);
    try {
      if (f.type_of(k) == ValueType::array) {
        (void)f.array_size(k);
        if (f.array_type(k) == ValueType::string) {
          (void)f.get_string_array(k);
        } else {
          (void)f.get_f32_array(k);
          (void)f.get_i32_array(k);
        }
      } else if (f.type_of(k) == ValueType::string) {
        (void)f.get_string(k);
      } else if (f.type_of(k) == ValueType::boolean) {
        (void)f.get_bool(k);
      } else {
        (void)f.get_f64(k);
        (void)f.get_i64(k);
        (void)f.get_u64(k);
      }
    } catch (const qmm::Error&) {
      // a value that does not convert: a clean error is the expected outcome
    }
  }
  for (const auto& t : f.tensors()) {
    if (f.find_tensor(t.name) != &t) __builtin_trap();
    if (!qmm::gguf::ggml_can_dequantize(t.type)) continue;
    const size_t k = t.shape[0], rows = t.rows();
    std::vector<float> row(k);
    qmm::gguf::dequantize_rows(t.type, t.data, row.data(), 1, k);
    const size_t rb = qmm::gguf::ggml_row_bytes(t.type, k);
    qmm::gguf::dequantize_rows(t.type, t.data + (rows - 1) * rb, row.data(), 1, k);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const qmm::gguf::File f = qmm::gguf::File::from_memory(data, size, "fuzz");
    read_everything(f);
  } catch (const qmm::Error&) {
    // rejected with a message: fine
  }
  return 0;
}
