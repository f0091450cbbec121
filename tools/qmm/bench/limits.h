// Machine limits measured on the spot (the denominators of every efficiency figure).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/thread_pool.h"

namespace qmm::cli {

struct MachineLimits {
  int threads = 1;
  double dram_read_gbs = 0;   // one pass over >= 256 MiB
  double hot_read_gbs = 0;    // repeated reads of a cache-resident buffer
  double int8_gops = 0;       // best int8 dot-product instruction (ops = 2 per MAC)
  std::string int8_instr;     // which instruction that was
  double avx2_int8_gops = 0;  // vpmaddubsw + vpmaddwd peak (x86), 0 elsewhere
  double fp32_gflops = 0;     // FMA peak
};

MachineLimits measure_limits(int threads);

// Seconds of one plain read of the `count` buffers bufs[i] of bytes[i] bytes, each split into
// one contiguous part per thread of `pool` (as the matmul driver splits a weight matrix): the
// DRAM time of exactly those bytes (the fastest of limits_arch.h's kReadPatterns). Benchmarks time it alternately with a kernel over the
// same buffers, so both figures see the same moment of a shared machine.
double read_pass_seconds(ThreadPool& pool, const uint8_t* const* bufs, const size_t* bytes, size_t count);
void print_limits(const MachineLimits& l, bool json);
std::string limits_json(const MachineLimits& l);  // one JSON object; null for what was not measured

}  // namespace qmm::cli
