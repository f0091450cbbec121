// GGUF reader (versions 2 and 3, little-endian): the file is mmapped read-only and every
// count, length, offset, type and shape is validated before use, so a malformed or hostile
// file gives a one-line qmm::Error (Status::io) naming what is wrong — never a crash, a hang
// or a huge allocation.
//
// Layout (all little-endian):
//   "GGUF" u32 version  u64 n_tensors  u64 n_kv
//   n_kv × { string key, u32 value_type, value }          string = u64 length + bytes (no NUL)
//   n_tensors × { string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset }
//   padding to `general.alignment` (default 32), then the data section; a tensor's offset is
//   relative to the data section and a multiple of the alignment.
// An array value is { u32 element_type, u64 count, count × element }; arrays of arrays are rejected.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/dequant.h"

namespace qmm::gguf {

enum class ValueType : uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
  string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12
};
const char* value_type_name(ValueType t);

struct TensorInfo {
  std::string name;
  uint32_t type = 0;              // ggml type id (see dequant.h)
  std::vector<uint64_t> shape;    // ne[0] first: ne[0] = row length (k), ne[1] = rows (n)
  uint64_t offset = 0;            // relative to the data section
  const uint8_t* data = nullptr;  // into the mmap; aligned to min(alignment(), page size) — real
                                  // files use 32, but general.alignment 1 or 2 is legal GGUF
  size_t bytes = 0;
  uint64_t rows() const;          // product of shape[1..] (1 for a 1-D tensor)
  uint64_t elements() const;      // product of all of shape
};

class File {  // move-only; owns the mmap
 public:
  // Throws qmm::Error (Status::io) "PATH: what is wrong".
  static File open(const std::string& path);
  // Parses GGUF bytes in memory (same checks; `name` prefixes the errors). The bytes are not
  // copied and must outlive the File. For tests and the fuzzer.
  static File from_memory(const uint8_t* data, size_t size, const std::string& name = "<memory>");

  File(File&& o) noexcept;
  File& operator=(File&& o) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  size_t file_size() const { return size_; }
  size_t data_offset() const { return data_offset_; }  // start of the data section in the file
  // The bytes before the data section (metadata and tensor infos), for cache keys.
  std::span<const uint8_t> header_bytes() const { return {base_, data_offset_}; }
  // The file's modification time (ns since the epoch) when it was opened (0 from memory).
  int64_t mtime_ns() const { return mtime_ns_; }

  bool has(std::string_view key) const;
  ValueType type_of(std::string_view key) const;  // throws if absent

  // Typed getters throw "key 'x' missing" / "key 'x' has type T, expected U". Numeric getters
  // accept any integer or float type whose value fits (a float must be integral for the
  // integer getters).
  uint64_t get_u64(std::string_view key) const;
  std::optional<uint64_t> find_u64(std::string_view key) const;
  int64_t get_i64(std::string_view key) const;
  double get_f64(std::string_view key) const;
  std::optional<double> find_f64(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::string_view get_string(std::string_view key) const;
  std::optional<std::string_view> find_string(std::string_view key) const;

  // Arrays. Element types are checked; numeric arrays convert any element type that fits.
  ValueType array_type(std::string_view key) const;  // element type; throws if not an array
  uint64_t array_size(std::string_view key) const;   // throws if not an array
  std::vector<std::string_view> get_string_array(std::string_view key) const;  // views into the mmap
  std::vector<float> get_f32_array(std::string_view key) const;
  std::vector<int32_t> get_i32_array(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // Copies `bytes` at `at` (a pointer into this file, such as a tensor's data) to `dst` by
  // reading the file rather than the mapping, so that a file truncated meanwhile is an error
  // ("PATH: the file was truncated while being read"), not SIGBUS. For reads that last, such
  // as quantize's; a File from memory copies.
  void read(const void* at, size_t bytes, void* dst) const;
  const TensorInfo* find_tensor(std::string_view name) const;  // nullptr if absent
  const TensorInfo& tensor(std::string_view name) const;       // throws "tensor 'x' missing"

  // All metadata keys in file order.
  std::vector<std::string_view> keys() const;
  // The encoded value of `key` exactly as in the file (after the u32 type; for an array it
  // starts with the element type and count) — for copying metadata into a Writer.
  std::span<const uint8_t> raw_value(std::string_view key) const;
  // A one-line rendering of a value (arrays: type, count and the first few elements).
  std::string value_to_string(std::string_view key) const;

 private:
  struct Kv {
    std::string_view key;
    ValueType type;
    ValueType elem_type;  // arrays only
    uint64_t count;       // arrays only
    size_t value_pos;     // file offset of the encoded value (after the type)
    size_t value_end;     // file offset one past the value
  };
  File() = default;
  void parse();
  const Kv& kv(std::string_view key) const;
  [[noreturn]] void type_error(const Kv& kv, const char* expected) const;
  double numeric(const Kv& kv, const char* expected) const;  // scalar numeric value as double
  void release();

  std::string path_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // base_ is our mmap (else caller-owned memory)
  int fd_ = -1;          // the mapped file, for read()
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  size_t data_offset_ = 0;
  int64_t mtime_ns_ = 0;
  std::vector<Kv> kvs_;
  std::unordered_map<std::string_view, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string_view, size_t> tensor_index_;
};

}  // namespace qmm::gguf
