// The matmul's paired DRAM figure (paired.h).
#include "bench/paired.h"

#include <chrono>
#include <cmath>

namespace qmm::bench {

std::vector<PackedWeights> pack_copies(WeightType type, size_t n, size_t k, const uint8_t* rows, const KernelFilter& filter,
                                       size_t copies, ThreadPool& pool) {
  std::vector<PackedWeights> out;
  for (size_t i = 0; i < copies; ++i) out.push_back(PackedWeights::pack(type, n, k, rows, filter, &pool));
  return out;
}

PairedRounds paired_dram(const std::vector<PackedWeights>& copies, size_t m, const float* lhs, float* dst, Context& ctx,
                         double min_time, double (*clock)(), ReadPass read) {
  auto wall = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  std::vector<const uint8_t*> bufs;
  std::vector<size_t> sizes;
  for (const PackedWeights& c : copies) bufs.push_back(c.data()), sizes.push_back(c.bytes());
  const size_t k = copies.at(0).k(), n = copies[0].n();
  const auto count = static_cast<double>(copies.size());
  const double bytes = static_cast<double>(copies[0].bytes());
  PairedRounds r;
  const double start = wall();
  while (r.kernel_s.size() < 3 || wall() - start < min_time) {
    const double t0 = clock();
    for (const PackedWeights& c : copies) matmul(c, m, lhs, k * 4, dst, n * 4, -INFINITY, INFINITY, ctx);
    const double tk = (clock() - t0) / count;
    const double tr = read(ctx.pool(), bufs.data(), sizes.data(), copies.size()) / count;
    r.kernel_s.push_back(tk), r.ratio.push_back(tr / tk), r.read_gbs.push_back(bytes / tr / 1e9);
  }
  return r;
}

}  // namespace qmm::bench
