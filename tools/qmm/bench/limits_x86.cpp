// x86 probes: independent-accumulator loops of one instruction each (inline asm, so the
// compiler cannot fold them), timed on every thread of the pool at once.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "bench_util.h"
#include "core/cpu.h"
#include "limits_arch.h"

namespace qmm::cli {
namespace {

constexpr long kIters = 20'000'000;


// 12 independent accumulators: enough to cover latency 4-5 x 2-3 pipes.
__attribute__((target("avx512f,avx512vnni"))) void vnni512_loop(long n) {
  __asm__ volatile(
      "vpxord %%zmm14, %%zmm14, %%zmm14\n\t"
      "1:\n\t"
      "vpdpbusd %%zmm14, %%zmm15, %%zmm0\n\t vpdpbusd %%zmm14, %%zmm15, %%zmm1\n\t"
      "vpdpbusd %%zmm14, %%zmm15, %%zmm2\n\t vpdpbusd %%zmm14, %%zmm15, %%zmm3\n\t"
      "vpdpbusd %%zmm14, %%zmm15, %%zmm4\n\t vpdpbusd %%zmm14, %%zmm15, %%zmm5\n\t"
      "vpdpbusd %%zmm14, %%zmm15, %%zmm6\n\t vpdpbusd %%zmm14, %%zmm15, %%zmm7\n\t"
      "vpdpbusd %%zmm14, %%zmm15, %%zmm8\n\t vpdpbusd %%zmm14, %%zmm15, %%zmm9\n\t"
      "vpdpbusd %%zmm14, %%zmm15, %%zmm10\n\t vpdpbusd %%zmm14, %%zmm15, %%zmm11\n\t"
      "dec %0\n\t jnz 1b\n\t"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm14",
        "xmm15", "cc");
}

// vpmaddubsw alone, 12 independent results: the AVX2 int8 multiply throughput (the bound of
// any vpmaddubsw kernel; the sums after it need other pipes).
__attribute__((target("avx2"))) void maddubs_only_loop(long n) {
  __asm__ volatile(
      "vpxor %%ymm14, %%ymm14, %%ymm14\n\t"
      "1:\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm0\n\t vpmaddubsw %%ymm14, %%ymm15, %%ymm1\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm2\n\t vpmaddubsw %%ymm14, %%ymm15, %%ymm3\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm4\n\t vpmaddubsw %%ymm14, %%ymm15, %%ymm5\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm6\n\t vpmaddubsw %%ymm14, %%ymm15, %%ymm7\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm8\n\t vpmaddubsw %%ymm14, %%ymm15, %%ymm9\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm10\n\t vpmaddubsw %%ymm14, %%ymm15, %%ymm11\n\t"
      "dec %0\n\t jnz 1b\n\t"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm14",
        "xmm15", "cc");
}

__attribute__((target("avx2"))) void maddubs_loop(long n) {
  __asm__ volatile(
      "vpxor %%ymm14, %%ymm14, %%ymm14\n\t"
      "1:\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm0\n\t vpmaddubsw %%ymm14, %%ymm15, %%ymm1\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm2\n\t vpmaddubsw %%ymm14, %%ymm15, %%ymm3\n\t"
      "vpmaddwd %%ymm0, %%ymm13, %%ymm0\n\t vpmaddwd %%ymm1, %%ymm13, %%ymm1\n\t"
      "vpmaddwd %%ymm2, %%ymm13, %%ymm2\n\t vpmaddwd %%ymm3, %%ymm13, %%ymm3\n\t"
      "vpaddd %%ymm0, %%ymm4, %%ymm4\n\t vpaddd %%ymm1, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm2, %%ymm6, %%ymm6\n\t vpaddd %%ymm3, %%ymm7, %%ymm7\n\t"
      "dec %0\n\t jnz 1b\n\t"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm13", "xmm14", "xmm15", "cc");
}

__attribute__((target("avx512f"))) void fma512_loop(long n) {
  __asm__ volatile(
      "vpxord %%zmm14, %%zmm14, %%zmm14\n\t"
      "1:\n\t"
      "vfmadd231ps %%zmm14, %%zmm15, %%zmm0\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm1\n\t"
      "vfmadd231ps %%zmm14, %%zmm15, %%zmm2\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm3\n\t"
      "vfmadd231ps %%zmm14, %%zmm15, %%zmm4\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm5\n\t"
      "vfmadd231ps %%zmm14, %%zmm15, %%zmm6\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm7\n\t"
      "vfmadd231ps %%zmm14, %%zmm15, %%zmm8\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm9\n\t"
      "vfmadd231ps %%zmm14, %%zmm15, %%zmm10\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm11\n\t"
      "dec %0\n\t jnz 1b\n\t"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm14",
        "xmm15", "cc");
}

__attribute__((target("avx2,fma"))) void fma256_loop(long n) {
  __asm__ volatile(
      "vpxor %%ymm14, %%ymm14, %%ymm14\n\t"
      "1:\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm0\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm1\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm3\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm4\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm5\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm6\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm7\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm9\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm10\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm11\n\t"
      "dec %0\n\t jnz 1b\n\t"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm14",
        "xmm15", "cc");
}

// Ops/s of `loop` (ops_per_iter per thread per iteration), all threads at once. Timed in
// ~1 ms slices, best slice kept: on a shared machine a long run would also time the slices
// other processes held the core.
// Each thread keeps its own best slice; the figure is the sum over threads.
double peak(ThreadPool& pool, void (*loop)(long), double ops_per_iter) {
  constexpr long kSlice = kIters / 100;
  std::vector<double> best(static_cast<size_t>(pool.threads()), 1e30);
  pool.run([&](int t) {
    loop(kIters / 10);  // warm up (clocks, license levels)
    for (int r = 0; r < 100; ++r) {
      const double t0 = now_seconds();
      loop(kSlice);
      best[static_cast<size_t>(t)] = std::min(best[static_cast<size_t>(t)], now_seconds() - t0);
    }
  });
  double ops = 0;
  for (double b : best) ops += ops_per_iter * static_cast<double>(kSlice) / b;
  return ops;
}

// `streams` sequential streams (equal parts of the buffer) read at once: a GEMV reads several
// column panels concurrently, and one stream alone does not reach the bandwidth several get.
// ahead > 0: each load also prefetches that many bytes ahead in its stream (past a stream's end
// into the next one or beyond the buffer: harmless, a prefetch never faults).
__attribute__((target("avx512f"))) uint64_t read_sum_avx512(const uint8_t* p, size_t bytes, ReadPattern pat) {
  const size_t q = bytes / pat.streams / 128 * 128;
  __m512i a0 = _mm512_set1_epi64(0), a1 = a0;
  for (size_t i = 0; i + 128 <= q; i += 128) {
    for (size_t s = 0; s < pat.streams; ++s) {
      const uint8_t* x = p + s * q + i;
      if (pat.ahead) {
        _mm_prefetch(reinterpret_cast<const char*>(x + pat.ahead), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(x + pat.ahead + 64), _MM_HINT_T0);
      }
      a0 = _mm512_add_epi64(a0, _mm512_load_si512(x));
      a1 = _mm512_add_epi64(a1, _mm512_load_si512(x + 64));
    }
  }
  // (Stored and summed by hand: GCC 12's _mm512_reduce_add_epi64 trips -Wuninitialized.)
  alignas(64) uint64_t l[8];
  _mm512_store_si512(l, _mm512_add_epi64(a0, a1));
  return l[0] + l[1] + l[2] + l[3] + l[4] + l[5] + l[6] + l[7];
}

__attribute__((target("avx2"))) uint64_t read_sum_avx2(const uint8_t* p, size_t bytes, ReadPattern pat) {
  const size_t q = bytes / pat.streams / 64 * 64;
  __m256i a0 = _mm256_setzero_si256(), a1 = a0;
  for (size_t i = 0; i + 64 <= q; i += 64) {
    for (size_t s = 0; s < pat.streams; ++s) {
      const uint8_t* x = p + s * q + i;
      if (pat.ahead) _mm_prefetch(reinterpret_cast<const char*>(x + pat.ahead), _MM_HINT_T0);
      a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(x)));
      a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(x + 32)));
    }
  }
  alignas(32) uint64_t l[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(l), _mm256_add_epi64(a0, a1));
  return l[0] + l[1] + l[2] + l[3];
}

bool has512() { return cpu_info().has(kFeatAVX512F | kFeatAVX512VNNI); }

}  // namespace

uint64_t read_sum(const uint8_t* p, size_t bytes, ReadPattern pat) {
  if (has512()) return read_sum_avx512(p, bytes, pat);
  if (cpu_info().has(kFeatAVX2)) return read_sum_avx2(p, bytes, pat);
  uint64_t s = 0;
  for (size_t i = 0; i + 8 <= bytes; i += 8) s += *reinterpret_cast<const uint64_t*>(p + i);
  return s;
}

double int8_peak_gops(ThreadPool& pool, std::string* instr) {
  if (has512()) {
    *instr = "vpdpbusd zmm";
    return peak(pool, vnni512_loop, 12.0 * 64 * 2) / 1e9;
  }
  if (cpu_info().has(kFeatAVX2)) {
    *instr = "vpmaddubsw ymm";
    return peak(pool, maddubs_only_loop, 12.0 * 32 * 2) / 1e9;
  }
  *instr = "none";
  return 0;
}

double avx2_int8_peak_gops(ThreadPool& pool) {
  if (!cpu_info().has(kFeatAVX2)) return 0;
  return peak(pool, maddubs_loop, 4.0 * 32 * 2) / 1e9;
}

double fp32_peak_gflops(ThreadPool& pool) {
  if (cpu_info().has(kFeatAVX512F)) return peak(pool, fma512_loop, 12.0 * 16 * 2) / 1e9;
  if (cpu_info().has(kFeatAVX2 | kFeatFMA)) return peak(pool, fma256_loop, 12.0 * 8 * 2) / 1e9;
  return 0;
}

}  // namespace qmm::cli
