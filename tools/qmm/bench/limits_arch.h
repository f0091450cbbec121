// Per-architecture probes behind measure_limits (limits_x86.cpp / limits_arm.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/thread_pool.h"

namespace qmm::cli {

// How a plain read walks a buffer: `streams` equal parts read at once, each load also
// prefetching `ahead` bytes further in its part (0: the hardware prefetcher alone).
struct ReadPattern {
  size_t streams = 4, ahead = 0;
};
// The paired read's patterns: the hardware prefetcher alone, and the decode GEMVs' way of
// prefetching ahead (x86_qloops.h), which on 2 MiB pages reads faster and on 4 KiB pages can read
// slower; the paired read takes the fastest, so no one loop's luck sets the ceiling.
inline constexpr ReadPattern kReadPatterns[] = {{4, 0}, {2, 1024}, {4, 2048}};
uint64_t read_sum(const uint8_t* p, size_t bytes, ReadPattern pat = {});  // widest loads the CPU has
double int8_peak_gops(ThreadPool& pool, std::string* instr);  // best int8 dot instruction
double avx2_int8_peak_gops(ThreadPool& pool);                 // 0 where not x86
double fp32_peak_gflops(ThreadPool& pool);

}  // namespace qmm::cli
