#include "core/buffer.h"

#if defined(__linux__)
#include <sys/mman.h>
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

void* alloc_large(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // Transparent huge pages where the system allows them (advice only; failure is harmless):
  // the first touch of a packed model then takes one fault per 2 MiB instead of per 4 KiB,
  // which was a third of the load time (docs/performance.md, K-quants, load).
  if (bytes >= kHugePage) madvise(p, bytes, MADV_HUGEPAGE);
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
