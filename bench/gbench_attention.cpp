// qmm_gbench_attention: the attention kernels (src/llm/attention) of this build that the CPU
// runs, one K/V head of llama-1b's shape (head_dim 64, 4 query heads per K/V head) at a depth:
// a decode row (all chunks folded) and a prefill task of 16 and of 32 rows (forward.cpp's
// kAttendTaskRows), per KV type, at depths 4,096 and 16,384.
// Arguments: depth. Example: qmm_gbench_attention --benchmark_filter=q8_0/prefill16/16384
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/cpu.h"
#include "core/random.h"
#include "llm/attention/attend_kernel.h"
#include "llm/kv_type.h"

namespace {

using namespace qmm;
using namespace qmm::llm;

void attend(benchmark::State& st, const AttendKernel* kernel, KvType kt, KvType vt, size_t rows) {
  const size_t hd = 64, heads = 4, depth = static_cast<size_t>(st.range(0)), ps = attend_partial_size(hd);
  const size_t kr = kv_row_bytes(kt, hd), vr = kv_row_bytes(vt, hd), n = depth + rows;
  std::vector<uint8_t> k(n * kr), v(n * vr);
  const auto x = random_floats(n * hd, 1);
  for (size_t p = 0; p < n; ++p) {
    kv_store(kt, &x[p * hd], &k[p * kr], hd);
    kv_store(vt, &x[p * hd], &v[p * vr], hd);
  }
  const auto q = random_floats(rows * heads * hd, 2);
  const KvHead head{kt, vt, k.data(), v.data(), kr, vr, {}};
  std::vector<float> scratch(attend_chunk_scratch(hd)), part(rows * heads * ps), acc(rows * heads * ps), out(rows * heads * hd);
  for (auto _ : st) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (size_t c = 0; c * kAttendChunk < n; ++c) {
      kernel->chunk(q.data(), heads * hd, heads, head, hd, c, depth, rows, 0.125f, 0.0f, scratch.data(), part.data());
      attend_combine(acc.data(), part.data(), rows * heads, hd);
    }
    attend_finish(acc.data(), rows, heads, hd, out.data(), heads * hd);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows * n));  // positions attended per row
}

const int registered = [] {
  for (const AttendKernel& kernel : attend_kernels()) {
    if (!cpu_info().has(kernel.features) || std::string(kernel.name) == "attend_ref") continue;
    for (KvType t : {KvType::f16, KvType::q8_0, KvType::q4_0}) {
      for (size_t rows : {1, 16, 32}) {
        const std::string name = std::string(kernel.name) + "/" + kv_type_name(t) + (rows == 1 ? "/decode" : "/prefill" + std::to_string(rows));
        benchmark::RegisterBenchmark(name.c_str(), attend, &kernel, t, t == KvType::q4_0 ? KvType::q8_0 : t, rows)->Arg(4096)->Arg(16384);
      }
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
