#include "gguf/gguf_writer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "core/error.h"

namespace qmm::gguf {

namespace {

constexpr size_t kMaxName = 63;              // ggml: GGML_MAX_NAME - 1
constexpr size_t kChunkBytes = 64u << 20;    // fill() granularity

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

template <class T>
std::vector<uint8_t> scalar(T v) {
  std::vector<uint8_t> out;
  put(out, v);
  return out;
}

template <class Strings>
std::vector<uint8_t> string_array(const Strings& v) {
  std::vector<uint8_t> out;
  put<uint32_t>(out, static_cast<uint32_t>(ValueType::string));
  put<uint64_t>(out, v.size());
  for (const auto& s : v) put_string(out, s);
  return out;
}

template <class T>
std::vector<uint8_t> numeric_array(ValueType t, const std::vector<T>& v) {
  std::vector<uint8_t> out;
  put<uint32_t>(out, static_cast<uint32_t>(t));
  put<uint64_t>(out, v.size());
  const size_t at = out.size();
  out.resize(at + v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data() + at, v.data(), v.size() * sizeof(T));
  return out;
}

size_t pad_to(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Zero bytes up to the next multiple of `alignment`.
void pad(AtomicFile& out, size_t alignment) {
  static const uint8_t zeros[256] = {};
  for (size_t n = pad_to(out.pos(), alignment) - out.pos(); n > 0;) {
    const size_t m = std::min(n, sizeof zeros);
    out.write(zeros, m);
    n -= m;
  }
}

}  // namespace

// ---- metadata ----

void Writer::set(std::string_view key, ValueType type, std::vector<uint8_t> value) {
  check_arg(!key.empty(), "GGUF metadata key must not be empty");
  const auto [it, added] = kv_index_.emplace(std::string(key), kvs_.size());
  if (!added) {
    kvs_[it->second].type = type;
    kvs_[it->second].value = std::move(value);
    return;
  }
  kvs_.push_back({std::string(key), type, std::move(value)});
}

void Writer::set_u8(std::string_view key, uint8_t v) { set(key, ValueType::u8, scalar(v)); }
void Writer::set_u32(std::string_view key, uint32_t v) { set(key, ValueType::u32, scalar(v)); }
void Writer::set_i32(std::string_view key, int32_t v) { set(key, ValueType::i32, scalar(v)); }
void Writer::set_u64(std::string_view key, uint64_t v) { set(key, ValueType::u64, scalar(v)); }
void Writer::set_f32(std::string_view key, float v) { set(key, ValueType::f32, scalar(v)); }
void Writer::set_bool(std::string_view key, bool v) { set(key, ValueType::boolean, scalar<uint8_t>(v ? 1 : 0)); }

void Writer::set_string(std::string_view key, std::string_view v) {
  std::vector<uint8_t> out;
  put_string(out, v);
  set(key, ValueType::string, std::move(out));
}

void Writer::set_string_array(std::string_view key, const std::vector<std::string>& v) {
  set(key, ValueType::array, string_array(v));
}
void Writer::set_string_array(std::string_view key, const std::vector<std::string_view>& v) {
  set(key, ValueType::array, string_array(v));
}
void Writer::set_f32_array(std::string_view key, const std::vector<float>& v) {
  set(key, ValueType::array, numeric_array(ValueType::f32, v));
}
void Writer::set_i32_array(std::string_view key, const std::vector<int32_t>& v) {
  set(key, ValueType::array, numeric_array(ValueType::i32, v));
}

void Writer::copy_kv(const File& from, std::string_view key) {
  const auto raw = from.raw_value(key);
  set(key, from.type_of(key), std::vector<uint8_t>(raw.begin(), raw.end()));
}

bool Writer::has(std::string_view key) const { return kv_index_.count(std::string(key)) != 0; }

void Writer::remove(std::string_view key) {
  const auto it = kv_index_.find(std::string(key));
  if (it == kv_index_.end()) return;
  kvs_.erase(kvs_.begin() + static_cast<std::ptrdiff_t>(it->second));
  kv_index_.clear();
  for (size_t i = 0; i < kvs_.size(); ++i) kv_index_.emplace(kvs_[i].key, i);
}

size_t Writer::alignment() const {
  if (const auto it = kv_index_.find("general.alignment"); it != kv_index_.end()) {
    const Kv& kv = kvs_[it->second];
    uint32_t a = 0;
    if (kv.type != ValueType::u32) fail(Status::invalid_argument, "general.alignment must be a u32");
    std::memcpy(&a, kv.value.data(), 4);
    if (a == 0 || (a & (a - 1)) != 0) fail(Status::invalid_argument, "general.alignment must be a power of two");
    return a;
  }
  return 32;
}

// ---- tensors ----

size_t Writer::checked_tensor(std::string_view name, uint32_t type, const std::vector<uint64_t>& shape) const {
  const std::string n(name);
  check_arg(!name.empty() && name.size() <= kMaxName, "tensor name '" + n + "' must have 1..63 bytes");
  check_arg(!tensor_names_.count(n), "duplicate tensor '" + n + "'");
  check_arg(ggml_type_known(type), "tensor '" + n + "': unknown ggml type " + std::to_string(type));
  check_arg(!shape.empty() && shape.size() <= 4, "tensor '" + n + "' must have 1..4 dimensions");
  size_t rows = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    check_arg(shape[i] > 0, "tensor '" + n + "' has a zero dimension");
    if (i > 0) rows = checked_mul(rows, static_cast<size_t>(shape[i]), "tensor rows");
  }
  return checked_mul(ggml_row_bytes(type, shape[0]), rows, "tensor bytes");
}

void Writer::add_tensor(std::string_view name, uint32_t type, const std::vector<uint64_t>& shape, const void* data,
                        size_t bytes) {
  const size_t expect = checked_tensor(name, type, shape);
  check_arg(bytes == expect, "tensor '" + std::string(name) + "' has " + std::to_string(bytes) + " bytes, expected " +
                                 std::to_string(expect));
  check_arg(data != nullptr, "tensor '" + std::string(name) + "' has no data");
  const size_t rb = ggml_row_bytes(type, shape[0]);
  tensors_.push_back({std::string(name), type, shape, bytes, rb, bytes / rb, data, nullptr});
  tensor_names_.emplace(name);
}

void Writer::add_tensor(std::string_view name, uint32_t type, const std::vector<uint64_t>& shape, Fill fill) {
  const size_t bytes = checked_tensor(name, type, shape);
  check_arg(static_cast<bool>(fill), "tensor '" + std::string(name) + "' has no fill function");
  const size_t rb = ggml_row_bytes(type, shape[0]);
  tensors_.push_back({std::string(name), type, shape, bytes, rb, bytes / rb, nullptr, std::move(fill)});
  tensor_names_.emplace(name);
}

// ---- output ----

void Writer::write(const std::string& path, const WriteOptions& opt) const {
  const size_t align = alignment();
  std::vector<uint8_t> head;
  head.insert(head.end(), {'G', 'G', 'U', 'F'});
  put<uint32_t>(head, 3);
  put<uint64_t>(head, tensors_.size());
  put<uint64_t>(head, kvs_.size());
  for (const Kv& kv : kvs_) {
    put_string(head, kv.key);
    put<uint32_t>(head, static_cast<uint32_t>(kv.type));
    head.insert(head.end(), kv.value.begin(), kv.value.end());
  }
  size_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(head, t.name);
    put<uint32_t>(head, static_cast<uint32_t>(t.shape.size()));
    for (uint64_t d : t.shape) put<uint64_t>(head, d);
    put<uint32_t>(head, t.type);
    put<uint64_t>(head, offset);
    offset = pad_to(checked_add(offset, t.bytes, "GGUF data size"), align);
  }

  AtomicFile out(path, opt);
  out.write(head.data(), head.size());
  pad(out, align);
  std::unique_ptr<uint8_t[]> chunk;
  size_t chunk_bytes = 0;
  for (const Tensor& t : tensors_) {
    if (t.data) {
      out.write(t.data, t.bytes);
    } else {
      const size_t rows_per_chunk = std::max<size_t>(1, kChunkBytes / t.row_bytes);
      const size_t need = std::min(t.rows, rows_per_chunk) * t.row_bytes;
      if (need > chunk_bytes) {
        chunk.reset(new uint8_t[need]);
        chunk_bytes = need;
      }
      for (size_t r = 0; r < t.rows; r += rows_per_chunk) {
        const size_t n = std::min(rows_per_chunk, t.rows - r);
        t.fill(chunk.get(), r, n);
        out.write(chunk.get(), n * t.row_bytes);
      }
    }
    pad(out, align);
  }
  out.commit();
}

}  // namespace qmm::gguf
