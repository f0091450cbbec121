#include "core/buffer.h"

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
constexpr size_t kHugePage = size_t{2} << 20;

void* map(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Transparent huge pages where the system allows them (advice only; failure is harmless):
// the first touch of a packed model then takes one fault per 2 MiB instead of per 4 KiB,
// which was a third of its load time (docs/performance.md, K-quants, load). The mapping starts
// on a 2 MiB boundary (mapped larger, the ends cut off), else a buffer of a few MiB may hold no
// whole huge page; its length stays `bytes`, so the last partial 2 MiB takes small pages.
void* alloc_large(size_t bytes) {
  if (bytes < kHugePage) return map(bytes);
  const size_t span = bytes + kHugePage;
  auto* base = static_cast<uint8_t*>(map(span));
  if (!base) return nullptr;
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  uint8_t* p = base + ((b + kHugePage - 1) / kHugePage * kHugePage - b);
  uint8_t* end = p + (bytes + page - 1) / page * page;
  if (p > base) munmap(base, static_cast<size_t>(p - base));
  if (base + span > end) munmap(end, static_cast<size_t>(base + span - end));
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
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
#endif

}  // namespace qmm
