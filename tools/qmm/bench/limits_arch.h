// Per-architecture probes behind measure_limits (limits_x86.cpp / limits_arm.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/thread_pool.h"

namespace qmm::cli {

uint64_t read_sum(const uint8_t* p, size_t bytes);            // widest loads the CPU has
// The same loads with a software prefetch kReadAhead bytes ahead in each stream, the access
// pattern of the decode GEMVs (x86_qloops.h): on 2 MiB pages it reads faster than the hardware
// prefetcher alone, on 4 KiB pages sometimes slower, so the paired read takes the faster of the two.
uint64_t read_sum_prefetched(const uint8_t* p, size_t bytes);
double int8_peak_gops(ThreadPool& pool, std::string* instr);  // best int8 dot instruction
double avx2_int8_peak_gops(ThreadPool& pool);                 // 0 where not x86
double fp32_peak_gflops(ThreadPool& pool);

}  // namespace qmm::cli
