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
void* alloc_large(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
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
