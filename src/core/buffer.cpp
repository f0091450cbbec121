#include "core/buffer.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

// Under AddressSanitizer large buffers stay on the malloc heap: ASan puts redzones around heap
// blocks, not around mmapped ones, and the sanitizer builds should check every buffer.
#if defined(__SANITIZE_ADDRESS__)
#define QMM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QMM_ASAN 1
#endif
#endif

namespace qmm {

#if defined(__linux__) && !defined(QMM_ASAN)
// Buffers of 2 MiB and more start on a 2 MiB boundary, so that advise_huge_pages (below) can
// map them with transparent huge pages.
void* alloc_large(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  if (bytes < kHuge || bytes > SIZE_MAX - kHuge) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  void* raw = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t r = reinterpret_cast<uintptr_t>(raw), a = (r + kHuge - 1) / kHuge * kHuge;
  const uintptr_t end = (a + bytes + page - 1) / page * page, raw_end = r + bytes + kHuge;
  if (a > r) munmap(raw, a - r);
  if (raw_end > end) munmap(reinterpret_cast<void*>(end), raw_end - end);
  return reinterpret_cast<void*>(a);
}

// Asked before the buffer is written (its pages fault in as 2 MiB ones), as the packed weights
// that stay in this process's memory are: a decode step streams every one from DRAM, and the
// GEMVs' software prefetches run 2 KiB ahead in 4 column panels at once, each crossing a 4 KiB
// page every few microseconds. On the 2-vCPU Xeon (model 167) 2 MiB pages took llama-1b Q4_0
// decode from ~90 % of a paired plain read to the plain read's own speed (performance-decode.md).
// It costs the packing, so it is asked only where it pays: faulting the 2 MiB pages in made
// llama-3.2-3b's repack 1.3 -> 2.7-5 s there (collapsing 4 KiB pages after the pack,
// MADV_COLLAPSE, slower still). Best effort: with THP "never" or no free huge page, the pages
// stay 4 KiB.
void advise_huge_pages(void* p, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) / kHuge * kHuge;
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + bytes) / kHuge * kHuge;
  if (p != nullptr && e > a) madvise(reinterpret_cast<void*>(a), e - a, MADV_HUGEPAGE);
}
void free_large(void* p, size_t bytes) {
  if (p) munmap(p, bytes);
}
#else
void* alloc_large(size_t bytes) {
  void* p = std::aligned_alloc(AlignedBuffer::kAlign, bytes);
  if (p) std::memset(p, 0, bytes);
  return p;
}
void free_large(void* p, size_t) { std::free(p); }
void advise_huge_pages(void*, size_t) {}
#endif

}  // namespace qmm
