// Google Benchmark over the kernel list: every variant this CPU can run, called directly (one
// thread, no driver) on packed operands — GEMV kernels at m = 1, GEMM kernels at m = 64 —
// and every LHS packer of the list. Counters: GOPS (2 per multiply-add) and weight bytes/s.
// The `qmm bench` verbs give the same figures as ratios to the machine's measured limits.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/blocks.h"
#include "core/buffer.h"
#include "core/cpu.h"
#include "core/random.h"
#include "kernels/kernel_list.h"
#include "matmul/select.h"

namespace qmm {
namespace {

// Packed operands of one kernel for an m x n x k problem.
struct Operands {
  AlignedBuffer lhs, rhs;
  std::vector<float> dst;
  Operands(const Ukernel& u, size_t m, size_t n, size_t k) {
    const TileParams p = kernel_params(u);
    const std::vector<float> w = random_floats(n * k, 1), a = random_floats(m * k, 2);
    std::vector<uint8_t> rows(row_bytes(u.type, k) * n);
    quantize_rows(u.type, w.data(), rows.data(), n, k);
    rhs.resize(rhs_packed_size(u, p, n, k));
    u.rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rhs.data());
    lhs.resize(lhs_packed_size(u, p, m, k));
    u.lhs->run(m, k, p.mr, p.kr, p.sr, a.data(), k * 4, lhs.data());
    dst.resize(m * n);
  }
};

void run_kernel(benchmark::State& state, const Ukernel* u, size_t m, size_t n, size_t k) {
  Operands o(*u, m, n, k);
  for (auto _ : state) {
    u->run(m, n, k, o.lhs.data(), o.rhs.data(), o.dst.data(), n * 4, -INFINITY, INFINITY);
    benchmark::DoNotOptimize(o.dst.data());
    benchmark::ClobberMemory();
  }
  const double ops = 2.0 * static_cast<double>(m * n * k) * static_cast<double>(state.iterations());
  state.counters["GOPS"] = benchmark::Counter(ops / 1e9, benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<int64_t>(o.rhs.size() * state.iterations()));
}

void run_lhs_packer(benchmark::State& state, const Ukernel* u, size_t m, size_t k) {
  const TileParams p = kernel_params(*u);
  const std::vector<float> a = random_floats(m * k, 3);
  AlignedBuffer out(lhs_packed_size(*u, p, m, k));
  for (auto _ : state) {
    u->lhs->run(m, k, p.mr, p.kr, p.sr, a.data(), k * 4, out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(m * k * 4 * state.iterations()));
}

void register_all() {
  const CpuInfo& cpu = cpu_info();
  std::vector<const LhsPacker*> seen;
  for (const Ukernel* u : kernel_list()) {
    if (!unavailable_reason(u->isa, cpu).empty()) continue;
    const bool scalar = u->isa == Isa::scalar;
    const size_t n = scalar ? 256 : 4096, k = scalar ? 256 : 4096;
    const size_t m = u->gemv ? 1 : (scalar ? 8 : 64);
    const std::string shape = "/m" + std::to_string(m) + "_n" + std::to_string(n) + "_k" + std::to_string(k);
    benchmark::RegisterBenchmark((std::string(u->name) + shape).c_str(), run_kernel, u, m, n, k)
        ->Unit(benchmark::kMicrosecond);
    bool known = false;
    for (const LhsPacker* l : seen) known = known || l == u->lhs;
    if (!known && !u->gemv) {
      seen.push_back(u->lhs);
      const TileParams p = kernel_params(*u);
      benchmark::RegisterBenchmark((std::string(u->lhs->name) + "/mr" + std::to_string(p.mr) + "_m512_k4096").c_str(),
                                   run_lhs_packer, u, size_t{512}, size_t{4096})
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace
}  // namespace qmm

int main(int argc, char** argv) {
  qmm::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
