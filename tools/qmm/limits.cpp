#include "limits.h"

#include <cstdio>
#include <vector>

#include "bench_util.h"
#include "core/buffer.h"
#include "core/thread_pool.h"
#include "limits_arch.h"

namespace qmm::cli {
namespace {

// Bytes/s reading `bytes` per thread (each thread its own buffer), `passes` times.
double read_bandwidth(ThreadPool& pool, size_t bytes, int passes) {
  const int threads = pool.threads();
  std::vector<AlignedBuffer> bufs(static_cast<size_t>(threads));
  pool.run([&](int t) {
    bufs[static_cast<size_t>(t)].resize(bytes);
    std::memset(bufs[static_cast<size_t>(t)].data(), 1, bytes);  // fault the pages in
  });
  double best = 1e30;
  std::vector<uint64_t> sink(static_cast<size_t>(threads) * 8);
  for (int p = 0; p < passes; ++p) {
    const double t0 = now_seconds();
    pool.run([&](int t) { sink[static_cast<size_t>(t) * 8] += read_sum(bufs[static_cast<size_t>(t)].data(), bytes); });
    best = std::min(best, now_seconds() - t0);
  }
  return static_cast<double>(bytes) * threads / best;
}

}  // namespace

MachineLimits measure_limits(int threads) {
  MachineLimits l;
  l.threads = threads;
  ThreadPool pool(threads);
  // DRAM: 512 MiB in all, well beyond any last-level cache; best of 3 passes.
  l.dram_read_gbs = read_bandwidth(pool, (size_t{512} << 20) / static_cast<size_t>(threads), 3) / 1e9;
  // Cache-hot: 256 KiB per thread (L2), read 4000 times per pass.
  {
    const size_t bytes = 256 << 10;
    std::vector<AlignedBuffer> bufs(static_cast<size_t>(threads));
    for (auto& b : bufs) b.resize(bytes);
    double best = 1e30;
    std::vector<uint64_t> sink(static_cast<size_t>(threads) * 8);
    for (int p = 0; p < 5; ++p) {
      const double t0 = now_seconds();
      pool.run([&](int t) {
        for (int r = 0; r < 4000; ++r) sink[static_cast<size_t>(t) * 8] += read_sum(bufs[static_cast<size_t>(t)].data(), bytes);
      });
      best = std::min(best, now_seconds() - t0);
    }
    l.hot_read_gbs = static_cast<double>(bytes) * 4000 * threads / best / 1e9;
  }
  l.int8_gops = int8_peak_gops(pool, &l.int8_instr);
  l.avx2_int8_gops = avx2_int8_peak_gops(pool);
  l.fp32_gflops = fp32_peak_gflops(pool);
  return l;
}

void print_limits(const MachineLimits& l, bool json) {
  if (json) {
    std::printf(
        "{\"threads\": %d, \"dram_read_gbs\": %.2f, \"hot_read_gbs\": %.2f, \"int8_gops\": %.1f, \"int8_instr\": \"%s\", "
        "\"avx2_int8_gops\": %.1f, \"fp32_gflops\": %.1f}\n",
        l.threads, l.dram_read_gbs, l.hot_read_gbs, l.int8_gops, l.int8_instr.c_str(), l.avx2_int8_gops, l.fp32_gflops);
    return;
  }
  std::printf("machine limits, %d thread%s (measured now)\n", l.threads, l.threads == 1 ? "" : "s");
  std::printf("  DRAM read bandwidth      %8.1f GB/s   (one pass over 512 MiB, best of 3)\n", l.dram_read_gbs);
  std::printf("  cache-hot read bandwidth %8.1f GB/s   (256 KiB per thread)\n", l.hot_read_gbs);
  std::printf("  int8 dot-product peak    %8.1f GOPS   (%s alone; 1 MAC = 2 ops)\n", l.int8_gops, l.int8_instr.c_str());
  if (l.avx2_int8_gops > 0) std::printf("  AVX2 int8 peak           %8.1f GOPS   (vpmaddubsw + vpmaddwd + vpaddd)\n", l.avx2_int8_gops);
  std::printf("  FP32 FMA peak            %8.1f GFLOPS\n", l.fp32_gflops);
}

}  // namespace qmm::cli
