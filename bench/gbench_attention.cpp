// qmm_gbench_attention: the attention kernels (src/llm/attention) of this build that the CPU
// runs, one K/V head of llama-1b's shape (head_dim 64, 4 query heads per K/V head) at a depth:
// a decode row (all chunks folded) and a prefill task of 16 and of 32 rows (forward.cpp's
// kAttendTaskRows), per KV type, at depths 4,096 and 16,384.
// decode_hd128_group3 / 3_as_2+1 / 4: one K/V head of llama-3.2-3b's shape (head_dim 128, 3 query
// heads in one call, or in calls of 2 and 1 as before the 3-head pass; 4 for comparison), a decode
// row at depth 4,096.
// decode_sharp: a decode row whose scores spread wide (scale 100 where the others take 0.125: most
// positions' weights e^(s − m) tiny, as at depth in a model), the case subnormal sums made slow.
// decode_stream / read_stream: a decode row's bandwidth from DRAM (below).
// decode_model: a decode step's attention as forward.cpp lays it out and orders it (below).
// Arguments: depth. Example: qmm_gbench_attention --benchmark_filter=q8_0/prefill16/16384
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "core/buffer.h"
#include "core/cpu.h"
#include "core/random.h"
#include "llm/attention/attend_kernel.h"
#include "llm/kv_type.h"
#include "llm/ops.h"

namespace {

using namespace qmm;
using namespace qmm::llm;

// split: the heads in calls of at most `split` heads each (a group of 3 as 2 + 1: how the
// kernels served it before they had a 3-head pass).
void attend(benchmark::State& st, const AttendKernel* kernel, KvType kt, KvType vt, size_t rows, float scale, size_t hd, size_t heads,
            size_t split) {
  const size_t depth = static_cast<size_t>(st.range(0)), ps = attend_partial_size(hd);
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
      if (heads <= split) {
        kernel->chunk(q.data(), heads * hd, heads, head, hd, c, depth, rows, scale, 0.0f, scratch.data(), part.data());
        attend_combine(acc.data(), part.data(), rows * heads, hd);
        continue;
      }
      for (size_t h = 0; h < heads; h += split) {  // (rows == 1 here: the partials of heads h.. are contiguous)
        const size_t hs = std::min(split, heads - h);
        kernel->chunk(q.data() + h * hd, heads * hd, hs, head, hd, c, depth, rows, scale, 0.0f, scratch.data(), part.data());
        attend_combine(acc.data() + h * ps, part.data(), rows * hs, hd);
      }
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

// A decode row's attention laid out and ordered as a model's decode step runs it on one thread
// (forward.cpp's split-KV): `layers` layers of 8 K/V heads, each head's n_ctx = depth + 32 slots
// contiguous (K and V caches apart, on 2 MiB pages), the tasks chunk by chunk with the heads
// alternating (head_major: each head's chunks in turn, as decode_stream), partials merged in chunk
// order; between two layers `between` MiB of other memory are read (a layer's weights, as the
// GEMVs stream them), outside the timed part. Timed: the attention's thread CPU time, as the
// in-model measurement of docs/performance-depth.md. Arguments: depth, layers, query heads per
// K/V head, head_dim, MiB read between layers, head_major, query heads per kernel call.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void decode_model(benchmark::State& st, KvType t) {
  const size_t depth = static_cast<size_t>(st.range(0)), layers = static_cast<size_t>(st.range(1)), group = static_cast<size_t>(st.range(2));
  const size_t hd = static_cast<size_t>(st.range(3)), between = static_cast<size_t>(st.range(4)) << 20;
  const bool head_major = st.range(5) != 0;
  const size_t per_call = static_cast<size_t>(st.range(6));  // query heads a kernel call takes (2: a group of 3 as 2 + 1)
  const size_t kv_heads = 8, n_head = kv_heads * group, slots = depth + 32, n = depth + 1, ps = attend_partial_size(hd);
  const size_t kr = kv_row_bytes(t, hd), chunks = (n + kAttendChunk - 1) / kAttendChunk;
  AlignedBuffer k(layers * kv_heads * slots * kr), v(layers * kv_heads * slots * kr), w(std::max<size_t>(between * layers, 64));
  advise_huge_pages(k.data(), k.size()), advise_huge_pages(v.data(), v.size()), advise_huge_pages(w.data(), w.size());
  const auto x = random_floats(slots * hd, 1);
  for (size_t p = 0; p < slots; ++p) {
    kv_store(t, &x[p * hd], k.data() + p * kr, hd);
    kv_store(t, &x[((p * 7) % slots) * hd], v.data() + p * kr, hd);
  }
  for (size_t g = 1; g < layers * kv_heads; ++g) {
    std::copy(k.data(), k.data() + slots * kr, k.data() + g * slots * kr);
    std::copy(v.data(), v.data() + slots * kr, v.data() + g * slots * kr);
  }
  std::fill(w.data(), w.data() + w.size(), uint8_t{1});
  const auto q = random_floats(n_head * hd, 2);
  std::vector<float> scratch(attend_chunk_scratch(hd)), split(chunks * n_head * ps), acc(kAttendHeads * ps), out(n_head * hd);
  uint64_t sink = 0;
  double merge = 0;  // the folds' share
  for (auto _ : st) {
    double seconds = 0;
    for (size_t l = 0; l < layers; ++l) {
      const uint64_t* wl = reinterpret_cast<const uint64_t*>(w.data() + l * between);
      for (size_t i = 0; i < between / 8; i += 8) sink += wl[i] + wl[i + 1] + wl[i + 2] + wl[i + 3] + wl[i + 4] + wl[i + 5] + wl[i + 6] + wl[i + 7];
      const double t0 = thread_seconds();
      for (size_t task = 0; task < chunks * kv_heads; ++task) {
        const size_t ch = head_major ? task % chunks : task / kv_heads, g = head_major ? task / chunks : task % kv_heads;
        const size_t row = (l * kv_heads + g) * slots;
        const KvHead head{t, t, k.data() + row * kr, v.data() + row * kr, kr, kr, KvRing{0, slots}};
        for (size_t h0 = 0; h0 < group; h0 += per_call) {
          const size_t heads = std::min(per_call, group - h0), h = g * group + h0;
          attend_chunk(q.data() + h * hd, n_head * hd, heads, head, hd, ch, depth, 1, 0.125f, 0.0f, scratch.data(), split.data() + (ch * n_head + h) * ps);
        }
      }
      const double t1 = thread_seconds();
      for (size_t g = 0; g < kv_heads; ++g) {
        for (size_t h0 = 0; h0 < group; h0 += per_call) {
          const size_t heads = std::min(per_call, group - h0), h = g * group + h0;
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (size_t ch = 0; ch < chunks; ++ch) attend_combine(acc.data(), split.data() + (ch * n_head + h) * ps, heads, hd);
          attend_finish(acc.data(), 1, heads, hd, out.data() + h * hd, n_head * hd);
        }
      }
      const double t2 = thread_seconds();
      seconds += t2 - t0;
      merge += t2 - t1;
    }
    benchmark::DoNotOptimize(out.data());
    st.SetIterationTime(seconds);
  }
  benchmark::DoNotOptimize(sink);
  st.counters["merge_ms"] = benchmark::Counter(1e3 * merge / static_cast<double>(st.iterations()));  // of each step's time
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * layers * kv_heads * n * 2 * kr));
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
        benchmark::RegisterBenchmark(name.c_str(), attend, &kernel, t, t == KvType::q4_0 ? KvType::q8_0 : t, rows, 0.125f, size_t{64}, size_t{4}, size_t{4})
            ->Arg(4096)
            ->Arg(16384);
      }
      // Llama 3.2 3B's K/V head: head_dim 128, a group of 3 query heads (and 4, for comparison).
      for (auto [heads, split, what] : {std::tuple<size_t, size_t, const char*>{3, 4, "3"}, {3, 2, "3_as_2+1"}, {4, 4, "4"}}) {
        const std::string g = std::string(kernel.name) + "/" + kv_type_name(t) + "/decode_hd128_group" + what;
        benchmark::RegisterBenchmark(g.c_str(), attend, &kernel, t, t == KvType::q4_0 ? KvType::q8_0 : t, size_t{1}, 0.125f, size_t{128}, heads,
                                     split)
            ->Arg(4096);
      }
      const std::string sharp = std::string(kernel.name) + "/" + kv_type_name(t) + "/decode_sharp";
      benchmark::RegisterBenchmark(sharp.c_str(), attend, &kernel, t, t == KvType::q4_0 ? KvType::q8_0 : t, size_t{1}, 100.0f, size_t{64}, size_t{4},
                                   size_t{4})
          ->Arg(16384);
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
  // llama-1b (16 layers, 4 query heads per K/V head, head_dim 64) and llama-3.2-3b (28, 3, 128):
  // the model's order alone, with 36 / 64 MiB read between layers (about their weights per
  // layer), and head-major with them.
  for (KvType t : {KvType::f16, KvType::q8_0}) {
    const std::string name = std::string("decode_model/") + kv_type_name(t);
    benchmark::RegisterBenchmark(name.c_str(), decode_model, t)
        ->ArgNames({"depth", "layers", "group", "hd", "between", "head_major", "per_call"})
        ->Args({16384, 16, 4, 64, 0, 0, 4})
        ->Args({16384, 16, 4, 64, 36, 0, 4})
        ->Args({16384, 16, 4, 64, 36, 1, 4})
        ->Args({4096, 16, 4, 64, 36, 0, 4})
        ->Args({4096, 28, 3, 128, 64, 0, 4})
        ->Args({4096, 28, 3, 128, 64, 0, 2})
        ->Args({4096, 28, 4, 128, 64, 0, 4})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
