// AlignedBuffer's large allocations (core/buffer.cpp): 2 MiB-aligned and advised for
// transparent huge pages, zeroed, and given back whole.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "core/buffer.h"

#if defined(__SANITIZE_ADDRESS__)
#define QMM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QMM_TEST_ASAN 1
#endif
#endif

namespace qmm {
namespace {

constexpr size_t kHuge = size_t{2} << 20;

bool mmap_buffers() {
#if defined(__linux__) && !defined(QMM_TEST_ASAN)
  return true;
#else
  return false;
#endif
}

// The "THPeligible:" value of the /proc/self/smaps mapping that holds p (-1: none found).
int thp_eligible(const void* p) {
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
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return s;
}

TEST(AlignedBuffer, LargeBuffersStartOnHugePageBoundariesAndAreZero) {
  if (!mmap_buffers()) GTEST_SKIP() << "large buffers come from the heap here (not Linux, or AddressSanitizer)";
  for (size_t bytes : {kHuge, kHuge + 64, 3 * kHuge + 4096 + 192, 17 * kHuge - 64}) {
    AlignedBuffer b(bytes);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kHuge, 0u) << bytes;
    for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(b.data()[i], 0) << bytes << " @" << i;
    ASSERT_EQ(b.data()[bytes - 1], 0);
    b.data()[0] = 1, b.data()[bytes - 1] = 2;  // the whole range is writable
  }
  AlignedBuffer small((size_t{1} << 20) + 64);  // under 2 MiB: 64-byte alignment only, still zero
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % AlignedBuffer::kAlign, 0u);
  EXPECT_EQ(small.data()[(size_t{1} << 20) + 63], 0);
}

TEST(AlignedBuffer, LargeBuffersAreAdvisedForHugePages) {
  if (!mmap_buffers()) GTEST_SKIP() << "large buffers come from the heap here (not Linux, or AddressSanitizer)";
  const std::string mode = thp_mode();
  if (mode.empty() || mode.find("[never]") != std::string::npos) GTEST_SKIP() << "transparent huge pages are off here";
  AlignedBuffer b(4 * kHuge);
  const int eligible = thp_eligible(b.data());
  if (eligible < 0) GTEST_SKIP() << "this kernel's smaps has no THPeligible line";
  EXPECT_EQ(eligible, 1) << "THP mode: " << mode;
}

// The process's virtual size in KiB (/proc/self/status VmSize; -1: none).
long vm_size_kib() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stol(line.substr(7));
  }
  return -1;
}

TEST(AlignedBuffer, FreeingALargeBufferUnmapsAllOfIt) {
  if (!mmap_buffers()) GTEST_SKIP() << "large buffers come from the heap here (not Linux, or AddressSanitizer)";
  if (vm_size_kib() < 0) GTEST_SKIP() << "no /proc/self/status VmSize here";
  { AlignedBuffer warm(size_t{64} << 20); }
  const long before = vm_size_kib();
  for (int i = 0; i < 20; ++i) {
    AlignedBuffer b((size_t{64} << 20) + 64 * static_cast<size_t>(i));
    b.data()[0] = 1;
  }
  // The slack around each aligned start (up to 2 MiB a round) would leave 40 MiB mapped.
  EXPECT_LE(vm_size_kib(), before + 4096) << "KiB before: " << before;
}

}  // namespace
}  // namespace qmm
