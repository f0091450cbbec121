// Per-architecture probes behind measure_limits (limits_x86.cpp / limits_arm.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/thread_pool.h"

namespace qmm::cli {

uint64_t read_sum(const uint8_t* p, size_t bytes);            // widest loads the CPU has
double int8_peak_gops(ThreadPool& pool, std::string* instr);  // best int8 dot instruction
double avx2_int8_peak_gops(ThreadPool& pool);                 // 0 where not x86
double fp32_peak_gflops(ThreadPool& pool);

}  // namespace qmm::cli
