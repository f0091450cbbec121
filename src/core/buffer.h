// Aligned, zero-initialised byte buffer (64-byte alignment: one cache line, one zmm).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace qmm {

class AlignedBuffer {
 public:
  static constexpr size_t kAlign = 64;
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) { resize(bytes); }
  AlignedBuffer(AlignedBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(data_); }

  // Discards the contents; the new bytes are zero.
  void resize(size_t bytes) {
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
    if (bytes == 0) return;
    const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    data_ = static_cast<uint8_t*>(std::aligned_alloc(kAlign, rounded));
    if (!data_) throw std::bad_alloc();
    std::memset(data_, 0, rounded);
    size_ = bytes;
  }
  // Grows (never shrinks) so that at least `bytes` fit; contents are not kept.
  void reserve(size_t bytes) {
    if (bytes > size_) resize(bytes);
  }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace qmm
