// GGUF v3 writer: metadata and tensors in, a file llama.cpp loads out (tensor data offsets
// and the data section aligned to `general.alignment`, default 32; zero padding).
//
// Tensor bytes are not copied: add_tensor() keeps a pointer (valid until write()) or a fill
// callback that write() calls, tensor by tensor and in chunks of whole rows (≤ 64 MiB), to
// produce the bytes into an I/O buffer — so a large model is generated and streamed to the
// file without ever being held in memory.
// write() goes through an AtomicFile (atomic_file.h): a unique temporary renamed over PATH on
// success, never a half-written or lost PATH; a character device (/dev/null) is written directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gguf/atomic_file.h"
#include "gguf/gguf.h"

namespace qmm::gguf {

class Writer {
 public:
  // Setting a key again replaces its value in place (keys keep their first position).
  void set_u8(std::string_view key, uint8_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_f32(std::string_view key, float v);
  void set_bool(std::string_view key, bool v);
  void set_string(std::string_view key, std::string_view v);
  void set_string_array(std::string_view key, const std::vector<std::string>& v);
  void set_string_array(std::string_view key, const std::vector<std::string_view>& v);
  void set_f32_array(std::string_view key, const std::vector<float>& v);
  void set_i32_array(std::string_view key, const std::vector<int32_t>& v);
  void copy_kv(const File& from, std::string_view key);  // the value exactly as encoded there
  bool has(std::string_view key) const;
  void remove(std::string_view key);

  // The tensor's bytes: rows × ggml_row_bytes(type, shape[0]). Checks the name (unique,
  // 1..63 bytes as ggml requires), shape (1..4 dims > 0) and type (known, row length a
  // multiple of its block size) and `bytes`.
  void add_tensor(std::string_view name, uint32_t type, const std::vector<uint64_t>& shape, const void* data,
                  size_t bytes);
  // fill(dst, first_row, rows) writes rows [first_row, first_row + rows) of the tensor to dst.
  using Fill = std::function<void(uint8_t* dst, size_t first_row, size_t rows)>;
  void add_tensor(std::string_view name, uint32_t type, const std::vector<uint64_t>& shape, Fill fill);
  size_t tensor_count() const { return tensors_.size(); }

  // Writes the file; throws qmm::Error (Status::io) on failure.
  void write(const std::string& path, const WriteOptions& opt = {}) const;

 private:
  struct Kv {
    std::string key;
    ValueType type;
    std::vector<uint8_t> value;  // encoded as in the file
  };
  struct Tensor {
    std::string name;
    uint32_t type;
    std::vector<uint64_t> shape;
    size_t bytes, row_bytes, rows;
    const void* data;
    Fill fill;
  };
  void set(std::string_view key, ValueType type, std::vector<uint8_t> value);
  size_t checked_tensor(std::string_view name, uint32_t type, const std::vector<uint64_t>& shape) const;
  size_t alignment() const;

  std::vector<Kv> kvs_;
  std::unordered_map<std::string, size_t> kv_index_;  // key -> position in kvs_
  std::vector<Tensor> tensors_;
  std::unordered_set<std::string> tensor_names_;
};

}  // namespace qmm::gguf
