// Test helpers for transparent huge pages: whether large buffers are mmapped here, the THP mode,
// and the huge-page kB of the mapping that holds an address (tests/test_buffer.cpp and the KV
// cache's test in tests/llm/test_kv_cache.cpp).
#pragma once
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define QMM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QMM_TEST_ASAN 1
#endif
#endif

namespace qmm::test {

// Whether large buffers are mmapped here (core/buffer.cpp: Linux without AddressSanitizer).
#if defined(__linux__) && !defined(QMM_TEST_ASAN)
constexpr bool kMmapBuffers = true;
#else
constexpr bool kMmapBuffers = false;
#endif
inline bool mmap_buffers() { return kMmapBuffers; }

// The kB of the /proc/self/smaps line `key` ("AnonHugePages:") of the mapping that holds p
// (-1: none found).
inline long smaps_kb(const void* p, const std::string& key) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  }
  return -1;
}

inline std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return s;
}

}  // namespace qmm::test
