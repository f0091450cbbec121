#include "gguf/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "core/error.h"

namespace qmm::gguf {

namespace {

constexpr uint32_t kMaxDims = 4;          // GGML_MAX_DIMS
constexpr size_t kMaxAlignment = 1u << 20;  // a sane bound; ggml files use 32

[[noreturn]] void bad(const std::string& msg) { fail(Status::io, msg); }

size_t scalar_size(ValueType t) {
  switch (t) {
    case ValueType::u8: case ValueType::i8: case ValueType::boolean: return 1;
    case ValueType::u16: case ValueType::i16: return 2;
    case ValueType::u32: case ValueType::i32: case ValueType::f32: return 4;
    case ValueType::u64: case ValueType::i64: case ValueType::f64: return 8;
    case ValueType::string: case ValueType::array: return 0;
  }
  return 0;
}

bool known_value_type(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::f64); }

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Decodes a scalar numeric value at p (type t is numeric or boolean).
double decode_number(ValueType t, const uint8_t* p) {
  switch (t) {
    case ValueType::u8: return load<uint8_t>(p);
    case ValueType::i8: return load<int8_t>(p);
    case ValueType::u16: return load<uint16_t>(p);
    case ValueType::i16: return load<int16_t>(p);
    case ValueType::u32: return load<uint32_t>(p);
    case ValueType::i32: return load<int32_t>(p);
    case ValueType::f32: return load<float>(p);
    case ValueType::u64: return static_cast<double>(load<uint64_t>(p));
    case ValueType::i64: return static_cast<double>(load<int64_t>(p));
    case ValueType::f64: return load<double>(p);
    case ValueType::boolean: return load<uint8_t>(p);
    default: return 0;
  }
}

bool is_numeric(ValueType t) { return scalar_size(t) != 0 && t != ValueType::boolean; }

// Bounds-checked sequential reader over the mapped bytes.
class Cursor {
 public:
  Cursor(const uint8_t* base, size_t size) : base_(base), size_(size) {}
  size_t pos() const { return pos_; }
  size_t left() const { return size_ - pos_; }
  void need(size_t n, const char* what) const {
    if (n > left()) bad(std::string("truncated ") + what + " at offset " + std::to_string(pos_));
  }
  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v = load<T>(base_ + pos_);
    pos_ += sizeof(T);
    return v;
  }
  void skip(size_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }
  std::string_view string(const char* what) {
    const uint64_t len = read<uint64_t>(what);
    if (len > left()) {
      bad(std::string(what) + " at offset " + std::to_string(pos_ - 8) + " has length " + std::to_string(len) +
          ", past the end of the file");
    }
    std::string_view s(reinterpret_cast<const char*>(base_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

 private:
  const uint8_t* base_;
  size_t size_;
  size_t pos_ = 0;
};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string quoted(std::string_view s) {
  std::string r = "'";
  for (char c : s.substr(0, 80)) r += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (s.size() > 80) r += "...";
  return r + "'";
}

}  // namespace

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::u8: return "u8";
    case ValueType::i8: return "i8";
    case ValueType::u16: return "u16";
    case ValueType::i16: return "i16";
    case ValueType::u32: return "u32";
    case ValueType::i32: return "i32";
    case ValueType::f32: return "f32";
    case ValueType::boolean: return "bool";
    case ValueType::string: return "string";
    case ValueType::array: return "array";
    case ValueType::u64: return "u64";
    case ValueType::i64: return "i64";
    case ValueType::f64: return "f64";
  }
  return "unknown";
}

uint64_t TensorInfo::rows() const {
  uint64_t r = 1;
  for (size_t i = 1; i < shape.size(); ++i) r *= shape[i];  // validated at open: no overflow
  return r;
}

uint64_t TensorInfo::elements() const { return shape.empty() ? 0 : shape[0] * rows(); }

// ---- open / mmap ----

File File::open(const std::string& path) {
  File f;
  f.path_ = path;
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused as not a regular file).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(Status::io, path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(Status::io, path + ": not a regular file");
  }
  f.size_ = static_cast<size_t>(st.st_size);
  f.mtime_ns_ = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (f.size_ < 24) {
    ::close(fd);
    fail(Status::io, path + ": not a GGUF file (" + std::to_string(f.size_) + " bytes, too short for a header)");
  }
  void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  if (p == MAP_FAILED) {
    ::close(fd);
    fail(Status::io, path + ": cannot mmap: " + std::strerror(err));
  }
  f.base_ = static_cast<const uint8_t*>(p);
  f.mapped_ = true;
  f.fd_ = fd;
  try {
    f.parse();
  } catch (const Error& e) {
    fail(e.status(), path + ": " + e.what());
  }
  return f;
}

File File::from_memory(const uint8_t* data, size_t size, const std::string& name) {
  File f;
  f.path_ = name;
  f.base_ = data;
  f.size_ = size;
  try {
    if (size < 24) bad("not a GGUF file (" + std::to_string(size) + " bytes, too short for a header)");
    f.parse();
  } catch (const Error& e) {
    fail(e.status(), name + ": " + e.what());
  }
  return f;
}

File::File(File&& o) noexcept { *this = std::move(o); }

File& File::operator=(File&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    base_ = std::exchange(o.base_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, false);
    fd_ = std::exchange(o.fd_, -1);
    version_ = o.version_;
    alignment_ = o.alignment_;
    data_offset_ = o.data_offset_;
    mtime_ns_ = o.mtime_ns_;
    kvs_ = std::move(o.kvs_);
    kv_index_ = std::move(o.kv_index_);
    tensors_ = std::move(o.tensors_);
    tensor_index_ = std::move(o.tensor_index_);
  }
  return *this;
}

File::~File() { release(); }

void File::release() {
  if (base_ && mapped_) ::munmap(const_cast<uint8_t*>(base_), size_);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  mapped_ = false;
  fd_ = -1;
}

void File::read(const void* at, size_t bytes, void* dst) const {
  const auto* p = static_cast<const uint8_t*>(at);
  check_arg(p >= base_ && bytes <= size_ && static_cast<size_t>(p - base_) <= size_ - bytes,
            "File::read: the range is not inside " + path_);
  if (fd_ < 0) {
    std::memcpy(dst, p, bytes);
    return;
  }
  auto* out = static_cast<uint8_t*>(dst);
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::pread(fd_, out + done, bytes - done, static_cast<off_t>(p - base_ + static_cast<ptrdiff_t>(done)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(Status::io, path_ + ": cannot read: " + std::strerror(errno));
    if (n == 0) fail(Status::io, path_ + ": the file was truncated while being read");
    done += static_cast<size_t>(n);
  }
}

// ---- parsing ----

void File::parse() {
  Cursor c(base_, size_);
  if (std::memcmp(base_, "GGUF", 4) != 0) bad("not a GGUF file (bad magic)");
  c.skip(4, "magic");
  version_ = c.read<uint32_t>("version");
  if (version_ == 0x03000000u || version_ == 0x02000000u) bad("big-endian GGUF files are not supported");
  if (version_ == 1) bad("GGUF version 1 is not supported (convert the file again)");
  if (version_ != 2 && version_ != 3) bad("unsupported GGUF version " + std::to_string(version_));
  const uint64_t n_tensors = c.read<uint64_t>("tensor count");
  const uint64_t n_kv = c.read<uint64_t>("metadata count");
  // Each metadata entry takes >= 8 (key length) + 4 (type) + 1 bytes, each tensor info
  // >= 8 (name length) + 4 (n_dims) + 8 (ne) + 4 (type) + 8 (offset) bytes.
  if (n_kv > c.left() / 13) bad("metadata count " + std::to_string(n_kv) + " is too large for the file size");
  if (n_tensors > c.left() / 32) bad("tensor count " + std::to_string(n_tensors) + " is too large for the file size");

  // Metadata.
  kvs_.reserve(static_cast<size_t>(std::min<uint64_t>(n_kv, 1024)));  // counts are untrusted: grow as read
  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string ctx = "metadata entry " + std::to_string(i);
    Kv kv{};
    kv.key = c.string((ctx + " key").c_str());
    const std::string name = ctx + " " + quoted(kv.key);
    if (kv.key.empty()) bad(ctx + " has an empty key");
    const uint32_t t = c.read<uint32_t>((name + " type").c_str());
    if (!known_value_type(t)) bad(name + " has unknown value type " + std::to_string(t));
    kv.type = static_cast<ValueType>(t);
    kv.value_pos = c.pos();
    if (kv.type == ValueType::string) {
      c.string((name + " value").c_str());
    } else if (kv.type == ValueType::array) {
      const uint32_t et = c.read<uint32_t>((name + " element type").c_str());
      if (!known_value_type(et)) bad(name + " is an array of unknown type " + std::to_string(et));
      kv.elem_type = static_cast<ValueType>(et);
      if (kv.elem_type == ValueType::array) bad(name + " is an array of arrays (not supported)");
      kv.count = c.read<uint64_t>((name + " array count").c_str());
      const size_t min_elem = kv.elem_type == ValueType::string ? 8 : scalar_size(kv.elem_type);
      if (kv.count > c.left() / min_elem) {
        bad(name + " has " + std::to_string(kv.count) + " elements, past the end of the file");
      }
      if (kv.elem_type == ValueType::string) {
        for (uint64_t j = 0; j < kv.count; ++j) {
          if (c.left() < 8 || load<uint64_t>(base_ + c.pos()) > c.left() - 8) {  // name the element only on error
            c.string((name + " element " + std::to_string(j)).c_str());
          }
          c.skip(8 + static_cast<size_t>(load<uint64_t>(base_ + c.pos())), "string");
        }
      } else {
        c.skip(static_cast<size_t>(kv.count) * min_elem, (name + " array data").c_str());
      }
    } else {
      c.skip(scalar_size(kv.type), (name + " value").c_str());
    }
    kv.value_end = c.pos();
    if (!kv_index_.emplace(kv.key, kvs_.size()).second) bad("duplicate metadata key " + quoted(kv.key));
    kvs_.push_back(kv);
  }

  // general.alignment: a power of two (ggml stores it as u32).
  if (has("general.alignment")) {
    const Kv& a = kv("general.alignment");
    if (!is_numeric(a.type) || a.type == ValueType::f32 || a.type == ValueType::f64) {
      bad(std::string("key 'general.alignment' has type ") + value_type_name(a.type) + ", expected u32");
    }
    const double v = numeric(a, "u32");
    if (!(v >= 1 && v <= static_cast<double>(kMaxAlignment)) || (static_cast<size_t>(v) & (static_cast<size_t>(v) - 1))) {
      bad("general.alignment " + number(v) + " is not a power of two in [1, 2^20]");
    }
    alignment_ = static_cast<size_t>(v);
  }

  // Tensor infos.
  if (n_tensors > c.left() / 32) bad("tensor count " + std::to_string(n_tensors) + " is too large for the file size");
  tensors_.reserve(static_cast<size_t>(std::min<uint64_t>(n_tensors, 1024)));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    const std::string ctx = "tensor " + std::to_string(i);
    TensorInfo ti;
    const std::string_view name = c.string((ctx + " name").c_str());
    if (name.empty()) bad(ctx + " has an empty name");
    ti.name = std::string(name);
    const std::string tname = ctx + " " + quoted(name);
    const uint32_t n_dims = c.read<uint32_t>((tname + " dimension count").c_str());
    if (n_dims == 0 || n_dims > kMaxDims) bad(tname + " has " + std::to_string(n_dims) + " dimensions (1..4 allowed)");
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne = c.read<uint64_t>((tname + " shape").c_str());
      if (ne == 0 || ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        bad(tname + " has invalid dimension " + std::to_string(d) + " = " + std::to_string(ne));
      }
      if (__builtin_mul_overflow(elements, ne, &elements) ||
          elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        bad(tname + " has too many elements (shape overflows)");
      }
      ti.shape.push_back(ne);
    }
    ti.type = c.read<uint32_t>((tname + " type").c_str());
    if (!ggml_type_known(ti.type)) bad(tname + " has unknown ggml type " + std::to_string(ti.type));
    ti.offset = c.read<uint64_t>((tname + " offset").c_str());
    const size_t blk = ggml_block_size(ti.type);
    if (ti.shape[0] % blk != 0) {
      bad(tname + " row length " + std::to_string(ti.shape[0]) + " is not a multiple of the " +
          ggml_type_name(ti.type) + " block size " + std::to_string(blk));
    }
    // ne[0] may be up to 2^63 and a block holds more bytes than values (F32: 4 per value), so the
    // row's byte size can wrap to a small number as well as the whole tensor's.
    uint64_t row_bytes, bytes;
    if (__builtin_mul_overflow(ti.shape[0] / blk, ggml_type_size(ti.type), &row_bytes) ||
        __builtin_mul_overflow(row_bytes, ti.rows(), &bytes) || bytes > std::numeric_limits<size_t>::max()) {
      bad(tname + " is too large (byte size overflows)");
    }
    ti.bytes = static_cast<size_t>(bytes);
    if (ti.offset % alignment_ != 0) {
      bad(tname + " offset " + std::to_string(ti.offset) + " is not a multiple of the alignment " +
          std::to_string(alignment_));
    }
    tensors_.push_back(std::move(ti));
  }
  // Names are views into the stored strings: index them after the vector stopped moving.
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (!tensor_index_.emplace(tensors_[i].name, i).second) bad("duplicate tensor name " + quoted(tensors_[i].name));
  }

  // Data section: after the tensor infos, aligned.
  const size_t end_of_infos = c.pos();
  data_offset_ = end_of_infos + (alignment_ - end_of_infos % alignment_) % alignment_;
  if (tensors_.empty()) return;
  if (data_offset_ > size_) bad("truncated: the data section starts past the end of the file");
  const size_t data_size = size_ - data_offset_;
  for (TensorInfo& ti : tensors_) {
    if (ti.offset > data_size || ti.bytes > data_size - ti.offset) {
      bad("tensor " + quoted(ti.name) + " data [" + std::to_string(ti.offset) + ", +" + std::to_string(ti.bytes) +
          ") lies past the end of the file (data section has " + std::to_string(data_size) + " bytes)");
    }
    ti.data = base_ + data_offset_ + ti.offset;
  }
  // No two tensors may share bytes.
  std::vector<const TensorInfo*> order;
  order.reserve(tensors_.size());
  for (const TensorInfo& ti : tensors_) order.push_back(&ti);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i - 1]->offset + order[i - 1]->bytes > order[i]->offset) {
      bad("tensors " + quoted(order[i - 1]->name) + " and " + quoted(order[i]->name) + " overlap");
    }
  }
}

// ---- metadata access ----

bool File::has(std::string_view key) const { return kv_index_.count(key) != 0; }

const File::Kv& File::kv(std::string_view key) const {
  auto it = kv_index_.find(key);
  if (it == kv_index_.end()) fail(Status::io, path_ + ": key '" + std::string(key) + "' missing");
  return kvs_[it->second];
}

ValueType File::type_of(std::string_view key) const { return kv(key).type; }

void File::type_error(const Kv& k, const char* expected) const {
  std::string t = value_type_name(k.type);
  if (k.type == ValueType::array) t += std::string(" of ") + value_type_name(k.elem_type);
  fail(Status::io, path_ + ": key '" + std::string(k.key) + "' has type " + t + ", expected " + expected);
}

double File::numeric(const Kv& k, const char* expected) const {
  if (!is_numeric(k.type)) type_error(k, expected);
  return decode_number(k.type, base_ + k.value_pos);
}

uint64_t File::get_u64(std::string_view key) const {
  const Kv& k = kv(key);
  const uint8_t* p = base_ + k.value_pos;
  if (k.type == ValueType::u64) return load<uint64_t>(p);
  if (k.type == ValueType::i64) {
    const int64_t v = load<int64_t>(p);
    if (v < 0) fail(Status::io, path_ + ": key '" + std::string(key) + "' is negative (" + std::to_string(v) + ")");
    return static_cast<uint64_t>(v);
  }
  const double v = numeric(k, "an unsigned integer");
  if (!(v >= 0) || v != std::floor(v) || v >= 0x1p64) {
    fail(Status::io, path_ + ": key '" + std::string(key) + "' value " + number(v) + " is not an unsigned integer");
  }
  return static_cast<uint64_t>(v);
}

std::optional<uint64_t> File::find_u64(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_u64(key);
}

int64_t File::get_i64(std::string_view key) const {
  const Kv& k = kv(key);
  const uint8_t* p = base_ + k.value_pos;
  if (k.type == ValueType::i64) return load<int64_t>(p);
  if (k.type == ValueType::u64) {
    const uint64_t v = load<uint64_t>(p);
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(Status::io, path_ + ": key '" + std::string(key) + "' value " + std::to_string(v) + " does not fit i64");
    }
    return static_cast<int64_t>(v);
  }
  const double v = numeric(k, "an integer");
  if (v != std::floor(v) || !(v >= -0x1p63 && v < 0x1p63)) {
    fail(Status::io, path_ + ": key '" + std::string(key) + "' value " + number(v) + " is not an integer");
  }
  return static_cast<int64_t>(v);
}

double File::get_f64(std::string_view key) const { return numeric(kv(key), "a number"); }

std::optional<double> File::find_f64(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_f64(key);
}

bool File::get_bool(std::string_view key) const {
  const Kv& k = kv(key);
  if (k.type != ValueType::boolean) type_error(k, "bool");
  return base_[k.value_pos] != 0;
}

std::string_view File::get_string(std::string_view key) const {
  const Kv& k = kv(key);
  if (k.type != ValueType::string) type_error(k, "string");
  return {reinterpret_cast<const char*>(base_ + k.value_pos + 8), static_cast<size_t>(k.value_end - k.value_pos - 8)};
}

std::optional<std::string_view> File::find_string(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_string(key);
}

ValueType File::array_type(std::string_view key) const {
  const Kv& k = kv(key);
  if (k.type != ValueType::array) type_error(k, "array");
  return k.elem_type;
}

uint64_t File::array_size(std::string_view key) const {
  const Kv& k = kv(key);
  if (k.type != ValueType::array) type_error(k, "array");
  return k.count;
}

std::vector<std::string_view> File::get_string_array(std::string_view key) const {
  const Kv& k = kv(key);
  if (k.type != ValueType::array || k.elem_type != ValueType::string) type_error(k, "array of string");
  std::vector<std::string_view> out;
  out.reserve(static_cast<size_t>(k.count));
  const uint8_t* p = base_ + k.value_pos + 12;  // element type, count
  for (uint64_t i = 0; i < k.count; ++i) {     // lengths were validated at open
    const auto len = static_cast<size_t>(load<uint64_t>(p));
    out.emplace_back(reinterpret_cast<const char*>(p + 8), len);
    p += 8 + len;
  }
  return out;
}

std::vector<float> File::get_f32_array(std::string_view key) const {
  const Kv& k = kv(key);
  if (k.type != ValueType::array || !is_numeric(k.elem_type)) type_error(k, "array of f32");
  std::vector<float> out(static_cast<size_t>(k.count));
  const size_t es = scalar_size(k.elem_type);
  const uint8_t* p = base_ + k.value_pos + 12;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = k.elem_type == ValueType::f32 ? load<float>(p + i * es)
                                           : static_cast<float>(decode_number(k.elem_type, p + i * es));
  }
  return out;
}

std::vector<int32_t> File::get_i32_array(std::string_view key) const {
  const Kv& k = kv(key);
  const bool integral = is_numeric(k.elem_type) && k.elem_type != ValueType::f32 && k.elem_type != ValueType::f64;
  if (k.type != ValueType::array || !integral) type_error(k, "array of i32");
  std::vector<int32_t> out(static_cast<size_t>(k.count));
  const size_t es = scalar_size(k.elem_type);
  const uint8_t* p = base_ + k.value_pos + 12;
  for (size_t i = 0; i < out.size(); ++i) {
    if (k.elem_type == ValueType::i32) {
      out[i] = load<int32_t>(p + i * es);
      continue;
    }
    const double v = decode_number(k.elem_type, p + i * es);
    if (v < -0x1p31 || v >= 0x1p31) {
      fail(Status::io, path_ + ": key '" + std::string(key) + "' element " + std::to_string(i) + " does not fit i32");
    }
    out[i] = static_cast<int32_t>(v);
  }
  return out;
}

std::vector<std::string_view> File::keys() const {
  std::vector<std::string_view> out;
  out.reserve(kvs_.size());
  for (const Kv& k : kvs_) out.push_back(k.key);
  return out;
}

std::span<const uint8_t> File::raw_value(std::string_view key) const {
  const Kv& k = kv(key);
  return {base_ + k.value_pos, k.value_end - k.value_pos};
}

std::string File::value_to_string(std::string_view key) const {
  const Kv& k = kv(key);
  auto scalar = [&](ValueType t, const uint8_t* p) -> std::string {
    switch (t) {
      case ValueType::boolean: return *p ? "true" : "false";
      case ValueType::u64: return std::to_string(load<uint64_t>(p));
      case ValueType::i64: return std::to_string(load<int64_t>(p));
      case ValueType::f32: return number(load<float>(p));
      case ValueType::f64: return number(load<double>(p));
      default: return std::to_string(static_cast<long long>(decode_number(t, p)));
    }
  };
  if (k.type == ValueType::string) return quoted(get_string(key));
  if (k.type != ValueType::array) return scalar(k.type, base_ + k.value_pos);
  std::string r = std::string("[") + value_type_name(k.elem_type) + " x " + std::to_string(k.count) + "]";
  const size_t shown = static_cast<size_t>(std::min<uint64_t>(k.count, 4));
  if (k.elem_type == ValueType::string) {
    const auto v = get_string_array(key);
    for (size_t i = 0; i < shown; ++i) r.append(" ").append(quoted(v[i]));
  } else {
    for (size_t i = 0; i < shown; ++i) {
      r.append(" ").append(scalar(k.elem_type, base_ + k.value_pos + 12 + i * scalar_size(k.elem_type)));
    }
  }
  if (k.count > shown) r += " ...";
  return r;
}

// ---- tensors ----

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& File::tensor(std::string_view name) const {
  const TensorInfo* t = find_tensor(name);
  if (!t) fail(Status::io, path_ + ": tensor '" + std::string(name) + "' missing");
  return *t;
}

}  // namespace qmm::gguf
