#include "limits.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench_util.h"
#include "core/buffer.h"
#include "core/thread_pool.h"
#include "qmm/cli/json.h"
#include "limits_arch.h"

namespace qmm::cli {
namespace {

uint64_t g_read_sink = 0;  // keeps the reads observable

// Bytes/s reading `bytes` per thread (each thread its own buffer) `passes` times, every thread
// at once. Each thread times its reads in `chunk`-byte pieces (about a millisecond) and keeps
// the median: on a shared machine a whole-pass time would also count the time slices other
// processes held the core. The figure is the sum of the threads' medians, for the fastest of
// kReadPatterns, on 2 MiB pages where the system gives them: the packed weights and the KV cache
// are read from such pages with such prefetches, and a limit below what they reach is no limit.
double read_bandwidth(ThreadPool& pool, size_t bytes, size_t chunk, int passes) {
  const size_t threads = static_cast<size_t>(pool.threads());
  std::vector<AlignedBuffer> bufs(threads);
  pool.run([&](int t) {
    AlignedBuffer& b = bufs[static_cast<size_t>(t)];
    b.resize(bytes);
    advise_huge_pages(b.data(), bytes);
    std::memset(b.data(), 1, bytes);  // fault the pages in
  });
  std::vector<uint64_t> sink(threads * 8);
  double best = 0;
  for (const ReadPattern& pat : kReadPatterns) {
    std::vector<std::vector<double>> rates(threads);
    pool.run([&](int ti) {
      const size_t t = static_cast<size_t>(ti);
      for (int p = 0; p < passes; ++p) {
        for (size_t off = 0; off + chunk <= bytes; off += chunk) {
          const double t0 = now_seconds();
          sink[t * 8] += read_sum(bufs[t].data() + off, chunk, pat);
          rates[t].push_back(static_cast<double>(chunk) / (now_seconds() - t0));
        }
      }
    });
    double total = 0;
    for (auto& r : rates) {
      std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
      total += r[r.size() / 2];
    }
    best = std::max(best, total);
  }
  g_read_sink += sink[0];
  return best;
}

}  // namespace

double read_pass_seconds(ThreadPool& pool, const uint8_t* const* bufs, const size_t* bytes, size_t count) {
  const size_t threads = static_cast<size_t>(pool.threads());
  std::vector<uint64_t> sink(threads * 8);
  auto pass = [&](ReadPattern pat) {
    const double t0 = now_seconds();
    pool.run([&](int ti) {
      const size_t t = static_cast<size_t>(ti);
      for (size_t i = 0; i < count; ++i) {
        const size_t part = bytes[i] / threads / 128 * 128;
        const size_t begin = t * part, end = t + 1 == threads ? bytes[i] / 128 * 128 : begin + part;
        if (end > begin) sink[t * 8] += read_sum(bufs[i] + begin, end - begin, pat);
      }
    });
    return now_seconds() - t0;
  };
  double s = 1e30;  // the fastest pattern: the ceiling is what the machine can read
  for (const ReadPattern& pat : kReadPatterns) s = std::min(s, pass(pat));
  g_read_sink += sink[0];
  return s;
}

MachineLimits measure_limits(int threads) {
  MachineLimits l;
  l.threads = threads;
  ThreadPool pool(threads);
  // DRAM: 512 MiB in all, well beyond any last-level cache, read twice in 4 MiB pieces.
  l.dram_read_gbs = read_bandwidth(pool, (size_t{512} << 20) / static_cast<size_t>(threads), size_t{4} << 20, 2) / 1e9;
  // Cache-hot: 256 KiB per thread (L2), read 2000 times in 256 KiB pieces.
  l.hot_read_gbs = read_bandwidth(pool, size_t{256} << 10, size_t{256} << 10, 2000) / 1e9;
  l.int8_gops = int8_peak_gops(pool, &l.int8_instr);
  l.avx2_int8_gops = avx2_int8_peak_gops(pool);
  l.fp32_gflops = fp32_peak_gflops(pool);
  return l;
}

std::string limits_json(const MachineLimits& l) {
  const bool measured = l.dram_read_gbs > 0;  // a limit is never 0 once measured (--no-limits: null)
  JsonObject o;
  o.integer("threads", l.threads)
      .measured("dram_read_gbs", l.dram_read_gbs, measured, 2)
      .measured("hot_read_gbs", l.hot_read_gbs, measured, 2)
      .measured("int8_gops", l.int8_gops, measured, 1)
      .raw("int8_instr", measured ? json_string(l.int8_instr) : "null")
      .measured("avx2_int8_gops", l.avx2_int8_gops, l.avx2_int8_gops > 0, 1)
      .measured("fp32_gflops", l.fp32_gflops, measured, 1);
  return o.text();
}

void print_limits(const MachineLimits& l, bool json) {
  if (json) {
    std::printf("%s\n", limits_json(l).c_str());
    return;
  }
  std::printf("machine limits, %d thread%s (measured now)\n", l.threads, l.threads == 1 ? "" : "s");
  std::printf("  DRAM read bandwidth      %8.1f GB/s   (512 MiB on 2 MiB pages, fastest read pattern, median of 4 MiB pieces)\n", l.dram_read_gbs);
  std::printf("  cache-hot read bandwidth %8.1f GB/s   (256 KiB per thread, median of passes)\n", l.hot_read_gbs);
  std::printf("  int8 dot-product peak    %8.1f GOPS   (%s alone; 1 MAC = 2 ops)\n", l.int8_gops, l.int8_instr.c_str());
  if (l.avx2_int8_gops > 0) std::printf("  AVX2 int8 peak           %8.1f GOPS   (vpmaddubsw + vpmaddwd + vpaddd)\n", l.avx2_int8_gops);
  std::printf("  FP32 FMA peak            %8.1f GFLOPS\n", l.fp32_gflops);
}

}  // namespace qmm::cli
