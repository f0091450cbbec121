// AlignedBuffer's large allocations (core/buffer.cpp): 2 MiB-aligned, zeroed, given back
// whole, and on transparent huge pages when advised (as packed weights are).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/weight_types.h"
#include "matmul/matmul.h"

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

// Whether large buffers are mmapped here (buffer.cpp: Linux without AddressSanitizer).
#if defined(__linux__) && !defined(QMM_TEST_ASAN)
constexpr bool kMmapBuffers = true;
#else
constexpr bool kMmapBuffers = false;
#endif
bool mmap_buffers() { return kMmapBuffers; }

// The kB of the /proc/self/smaps line `key` ("AnonHugePages:") of the mapping that holds p
// (-1: none found).
long smaps_kb(const void* p, const std::string& key) {
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

TEST(AlignedBuffer, AdvisedBuffersFaultInHugePages) {
  AlignedBuffer b(5 * kHuge + 4096);
  advise_huge_pages(b.data(), b.size());
  advise_huge_pages(nullptr, 0);  // nothing
  for (size_t i = 0; i < b.size(); ++i) b.data()[i] = static_cast<uint8_t>(i * 7 + i / 4096);
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b.data()[i], static_cast<uint8_t>(i * 7 + i / 4096)) << i;
  if (!mmap_buffers()) GTEST_SKIP() << "large buffers come from the heap here (not Linux, or AddressSanitizer)";
  const std::string mode = thp_mode();
  if (mode.empty() || mode.find("[never]") != std::string::npos) GTEST_SKIP() << "transparent huge pages are off here";
  const long kb = smaps_kb(b.data(), "AnonHugePages:");
  if (kb < 0) GTEST_SKIP() << "this kernel's smaps has no AnonHugePages line";
  if (kb == 0) GTEST_SKIP() << "no huge page was free (THP mode: " << mode << ")";
  EXPECT_GE(kb, 4 * 2048) << "THP mode: " << mode;  // at least 4 of the 5 whole 2 MiB pages
}

TEST(AlignedBuffer, PackedWeightsOnHugePagesHoldTheSameBytes) {
  const size_t n = 8192, k = 512;  // 8192 x 512 Q8_0: ~4.3 MiB packed, two whole 2 MiB pages
  std::vector<uint8_t> rows(n * row_bytes(WeightType::q8_0, k));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint8_t>(i * 131 + 7);
  for (size_t b = 0; b < rows.size(); b += 34) rows[b] = 0, rows[b + 1] = 0x3c;  // f16 scale 1.0
  const PackedWeights a = PackedWeights::pack(WeightType::q8_0, n, k, rows.data(), KernelFilter{}, nullptr, false);
  const PackedWeights h = PackedWeights::pack(WeightType::q8_0, n, k, rows.data(), KernelFilter{}, nullptr, true);
  ASSERT_EQ(a.bytes(), h.bytes());
  EXPECT_EQ(std::memcmp(a.data(), h.data(), a.bytes()), 0);
  // Where THP is on request only (the common default), only the advised copy has huge pages.
  if (!mmap_buffers()) GTEST_SKIP() << "large buffers come from the heap here (not Linux, or AddressSanitizer)";
  const std::string mode = thp_mode();
  if (mode.find("[madvise]") == std::string::npos) GTEST_SKIP() << "THP mode is not madvise here: " << mode;
  const long huge = smaps_kb(h.data(), "AnonHugePages:"), plain = smaps_kb(a.data(), "AnonHugePages:");
  if (huge < 0) GTEST_SKIP() << "this kernel's smaps has no AnonHugePages line";
  EXPECT_EQ(plain, 0);
  if (huge == 0) GTEST_SKIP() << "no huge page was free";
  EXPECT_GE(huge, 2048);
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
