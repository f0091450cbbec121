// qmm_gbench_attention: the attention kernels (src/llm/attention) of this build that the CPU
// runs, one K/V head of llama-1b's shape (head_dim 64, 4 query heads per K/V head) at a depth:
// a decode row (all chunks folded) and a prefill task of 16 and of 32 rows (forward.cpp's
// kAttendTaskRows), per KV type, at depths 4,096 and 16,384.
// decode_sharp: a decode row whose scores spread wide (scale 100 where the others take 0.125: most
// positions' weights e^(s − m) tiny, as at depth in a model), the case subnormal sums made slow.
// decode_stream / read_stream: a decode row's bandwidth from DRAM (below).
// Arguments: depth. Example: qmm_gbench_attention --benchmark_filter=q8_0/prefill16/16384
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/cpu.h"
#include "core/random.h"
#include "llm/attention/attend_kernel.h"
#include "llm/kv_type.h"

namespace {

using namespace qmm;
using namespace qmm::llm;

void attend(benchmark::State& st, const AttendKernel* kernel, KvType kt, KvType vt, size_t rows, float scale) {
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
      kernel->chunk(q.data(), heads * hd, heads, head, hd, c, depth, rows, scale, 0.0f, scratch.data(), part.data());
      attend_combine(acc.data(), part.data(), rows * heads, hd);
    }
    attend_finish(acc.data(), rows, heads, hd, out.data(), heads * hd);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows * n));  // positions attended per row
}

// Decode rows streaming their K/V from DRAM, as in a decode step of a model: as many K/V heads at
// the depth as fill 512 MiB (more than this machine's L3 keeps hot), one decode row each, in
// turn; bytes/s counts the K and V bytes read. read_stream reads the same bytes plainly (eight
// 64-bit sums): the decode's share of it is its bandwidth efficiency at depth.
constexpr size_t kStreamBytes = size_t{512} << 20;

// huge: the cache on 2 MiB pages (advise_huge_pages, as the packed weights), else 4 KiB ones.
void decode_stream(benchmark::State& st, const AttendKernel* kernel, KvType t, bool huge) {
  const size_t hd = 64, heads = 4, depth = static_cast<size_t>(st.range(0)), ps = attend_partial_size(hd), n = depth + 1;
  const size_t kr = kv_row_bytes(t, hd), per_head = n * 2 * kr, nh = std::max<size_t>(1, kStreamBytes / per_head);
  AlignedBuffer k(nh * n * kr), v(nh * n * kr);
  if (huge) advise_huge_pages(k.data(), k.size()), advise_huge_pages(v.data(), v.size());
  const auto x = random_floats(n * hd, 1);
  for (size_t p = 0; p < n; ++p) {
    kv_store(t, &x[p * hd], k.data() + p * kr, hd);
    kv_store(t, &x[((p * 7) % n) * hd], v.data() + p * kr, hd);
  }
  for (size_t g = 1; g < nh; ++g) {
    std::copy(k.data(), k.data() + n * kr, k.data() + g * n * kr);
    std::copy(v.data(), v.data() + n * kr, v.data() + g * n * kr);
  }
  const auto q = random_floats(heads * hd, 2);
  std::vector<float> scratch(attend_chunk_scratch(hd)), part(heads * ps), acc(heads * ps), out(heads * hd);
  for (auto _ : st) {
    for (size_t g = 0; g < nh; ++g) {
      const KvHead head{t, t, k.data() + g * n * kr, v.data() + g * n * kr, kr, kr, {}};
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (size_t c = 0; c * kAttendChunk < n; ++c) {
        kernel->chunk(q.data(), heads * hd, heads, head, hd, c, depth, 1, 0.125f, 0.0f, scratch.data(), part.data());
        attend_combine(acc.data(), part.data(), heads, hd);
      }
      attend_finish(acc.data(), 1, heads, hd, out.data(), heads * hd);
      benchmark::DoNotOptimize(out.data());
    }
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * nh * per_head));
}

void read_stream(benchmark::State& st) {
  std::vector<uint64_t> buf(kStreamBytes / sizeof(uint64_t), 1);
  for (auto _ : st) {
    uint64_t s[8] = {};
    for (size_t i = 0; i < buf.size(); i += 8)
      for (size_t j = 0; j < 8; ++j) s[j] += buf[i + j];
    benchmark::DoNotOptimize(s);
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * kStreamBytes));
}

const int registered = [] {
  for (const AttendKernel& kernel : attend_kernels()) {
    if (!cpu_info().has(kernel.features) || std::string(kernel.name) == "attend_ref") continue;
    for (KvType t : {KvType::f16, KvType::q8_0, KvType::q4_0}) {
      for (size_t rows : {1, 16, 32}) {
        const std::string name = std::string(kernel.name) + "/" + kv_type_name(t) + (rows == 1 ? "/decode" : "/prefill" + std::to_string(rows));
        benchmark::RegisterBenchmark(name.c_str(), attend, &kernel, t, t == KvType::q4_0 ? KvType::q8_0 : t, rows, 0.125f)->Arg(4096)->Arg(16384);
      }
      const std::string sharp = std::string(kernel.name) + "/" + kv_type_name(t) + "/decode_sharp";
      benchmark::RegisterBenchmark(sharp.c_str(), attend, &kernel, t, t == KvType::q4_0 ? KvType::q8_0 : t, size_t{1}, 100.0f)->Arg(16384);
    }
  }
  benchmark::RegisterBenchmark("read_stream", read_stream);
  const AttendKernel& best = attend_kernel();
  for (KvType t : {KvType::f16, KvType::q8_0}) {
    for (bool huge : {false, true}) {
      const std::string name = std::string(best.name) + "/" + kv_type_name(t) + "/decode_stream" + (huge ? "_huge" : "");
      benchmark::RegisterBenchmark(name.c_str(), decode_stream, &best, t, huge)->Arg(4096)->Arg(16384);
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
