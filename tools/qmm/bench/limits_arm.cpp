// AArch64 probes (under emulation these measure nothing real; they exist for Arm hardware).
#include <algorithm>

#include "bench_util.h"
#include "core/cpu.h"
#include "limits_arch.h"

namespace qmm::cli {
namespace {

constexpr long kIters = 10'000'000;

__attribute__((target("dotprod"))) void sdot_loop(long n) {
  __asm__ volatile(
      "movi v14.16b, #1\n\t movi v15.16b, #1\n\t"
      "1:\n\t"
      "sdot v0.4s, v14.16b, v15.16b\n\t sdot v1.4s, v14.16b, v15.16b\n\t"
      "sdot v2.4s, v14.16b, v15.16b\n\t sdot v3.4s, v14.16b, v15.16b\n\t"
      "sdot v4.4s, v14.16b, v15.16b\n\t sdot v5.4s, v14.16b, v15.16b\n\t"
      "sdot v6.4s, v14.16b, v15.16b\n\t sdot v7.4s, v14.16b, v15.16b\n\t"
      "subs %0, %0, #1\n\t b.ne 1b\n\t"
      : "+r"(n)
      :
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v14", "v15", "cc");
}

void fmla_loop(long n) {
  __asm__ volatile(
      "movi v14.4s, #0\n\t movi v15.4s, #0\n\t"
      "1:\n\t"
      "fmla v0.4s, v14.4s, v15.4s\n\t fmla v1.4s, v14.4s, v15.4s\n\t"
      "fmla v2.4s, v14.4s, v15.4s\n\t fmla v3.4s, v14.4s, v15.4s\n\t"
      "fmla v4.4s, v14.4s, v15.4s\n\t fmla v5.4s, v14.4s, v15.4s\n\t"
      "fmla v6.4s, v14.4s, v15.4s\n\t fmla v7.4s, v14.4s, v15.4s\n\t"
      "subs %0, %0, #1\n\t b.ne 1b\n\t"
      : "+r"(n)
      :
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v14", "v15", "cc");
}

double peak(ThreadPool& pool, void (*loop)(long), double ops_per_iter) {
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const double t0 = now_seconds();
    pool.run([&](int) { loop(kIters); });
    best = std::min(best, now_seconds() - t0);
  }
  return ops_per_iter * static_cast<double>(kIters) * pool.threads() / best;
}

}  // namespace

uint64_t read_sum(const uint8_t* p, size_t bytes, ReadPattern) {  // one pattern: plain loads
  uint64_t s0 = 0, s1 = 0;
  for (size_t i = 0; i + 16 <= bytes; i += 16) {
    s0 += *reinterpret_cast<const uint64_t*>(p + i);
    s1 += *reinterpret_cast<const uint64_t*>(p + i + 8);
  }
  return s0 + s1;
}

double int8_peak_gops(ThreadPool& pool, std::string* instr) {
  if (!cpu_info().has(kFeatDotProd)) {
    *instr = "none";
    return 0;
  }
  *instr = "sdot v.4s";
  return peak(pool, sdot_loop, 8.0 * 16 * 2) / 1e9;
}

double avx2_int8_peak_gops(ThreadPool&) { return 0; }

double fp32_peak_gflops(ThreadPool& pool) { return peak(pool, fmla_loop, 8.0 * 4 * 2) / 1e9; }

}  // namespace qmm::cli
