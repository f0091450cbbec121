// Aligned, zero-initialised byte buffer (64-byte alignment: one cache line, one zmm).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace qmm {

// Large buffers come straight from the OS (buffer.cpp: mmap on Linux), so freeing one gives
// its memory back at once and its pages arrive zeroed; small ones from aligned_alloc.
void* alloc_large(size_t bytes);            // nullptr on failure; zeroed; 64-byte aligned
void free_large(void* p, size_t bytes);
// Asks for transparent huge pages over the whole 2 MiB pages of [p, p + bytes), before they are
// first written (Linux MADV_HUGEPAGE; best effort, elsewhere nothing): for buffers streamed
// from DRAM, such as packed weights.
void advise_huge_pages(void* p, size_t bytes);

class AlignedBuffer {
 public:
  static constexpr size_t kAlign = 64;
  static constexpr size_t kLarge = size_t{1} << 20;  // from this size on: alloc_large
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
  ~AlignedBuffer() { release(); }

  // Discards the contents; the new bytes are zero.
  void resize(size_t bytes) {
    release();
    if (bytes == 0) return;
    if (bytes > SIZE_MAX - kAlign) throw std::bad_alloc();  // rounded_size would wrap
    const size_t rounded = rounded_size(bytes);
    if (rounded >= kLarge) {
      data_ = static_cast<uint8_t*>(alloc_large(rounded));
    } else {
      data_ = static_cast<uint8_t*>(std::aligned_alloc(kAlign, rounded));
      if (data_) std::memset(data_, 0, rounded);
    }
    if (!data_) throw std::bad_alloc();
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
  // The bytes allocated for `bytes`: release() must see the size resize() allocated.
  static size_t rounded_size(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

  void release() {
    const size_t rounded = rounded_size(size_);
    if (rounded >= kLarge) {
      free_large(data_, rounded);
    } else {
      std::free(data_);
    }
    data_ = nullptr;
    size_ = 0;
  }

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace qmm
