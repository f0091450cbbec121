// A matmul's DRAM figure on a shared machine (`qmm bench matmul`): the kernel over `copies` of
// the packed weights in turn (together larger than the caches), alternately with a plain read of
// the same copies, until both have run at least `min_time` seconds and 3 rounds. Each round gives
// the kernel's time per copy, the ratio read ÷ kernel (the share of the memory bandwidth of that
// moment the kernel reached: a bandwidth measured once, earlier, drifts away on a shared
// machine) and the read's GB/s; callers take the medians.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "matmul/matmul.h"

namespace qmm::bench {

// Seconds of one plain read of `count` buffers (the CLI's limits code has one).
using ReadPass = double (*)(ThreadPool& pool, const uint8_t* const* bufs, const size_t* bytes, size_t count);

// `copies` identical packed weights (to rotate through DRAM) of the pair `filter` selects.
std::vector<PackedWeights> pack_copies(WeightType type, size_t n, size_t k, const uint8_t* rows, const KernelFilter& filter,
                                       size_t copies, ThreadPool& pool);

struct PairedRounds {
  std::vector<double> kernel_s, ratio, read_gbs;  // per round
};

// m rows of lhs (k floats each) times every copy, into dst (n floats a row); `clock`: the
// kernel's clock (wall or CPU time), the read is timed by `read` itself.
PairedRounds paired_dram(const std::vector<PackedWeights>& copies, size_t m, const float* lhs, float* dst, Context& ctx,
                         double min_time, double (*clock)(), ReadPass read);

}  // namespace qmm::bench
