// The measurements behind `qmm bench model` (tools/qmm/bench/bench_model.cpp parses and prints
// them): llama-bench's pp<N> (a prefill of N tokens as one batch) and tg<N> (N single-token
// decodes) after d cached positions, a prompt and its decodes timed together (-pg), the bounds
// of a token, and the paired read: each decoded token followed by a plain read of the packed
// weights it read (of an MoE layer, the router and the experts it chose) and of the KV bytes its
// attention read, so that (read time ÷ token time) is the share of the memory bandwidth of that
// moment the decode reached.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "llm/model.h"

namespace qmm::llm {

// What one token costs: the packed weight bytes a decoded token reads (an MoE model: its dense
// weights and, on average, expert_used_count of expert_count experts; plus one embedding row),
// and its matmul operations on int8 kernels (quantized weights) and on float ones.
struct TokenCost {
  double weight_bytes = 0, int8_ops = 0, float_ops = 0;
};
TokenCost token_cost(const Model& model);

// Tokens/s at most: a decode that reads `bytes` per token at `dram_gbs`; a prefill at the
// int8 and FP32 peaks (GOPS, GFLOPS). 0 where a figure is not measured (0).
double decode_bound(double bytes, double dram_gbs);
double prefill_bound(const TokenCost& cost, double int8_gops, double fp32_gflops);

// A decode's effective bandwidth, GB/s: the weight bytes and KV bytes a token reads ÷ its time
// (tokens_per_s tokens a second). At depth its ratio to the depth-0 figure says how much of the
// speed the attention's reads keep (issue 29's "≥ 75 % of depth-0 effective bandwidth").
double effective_gbs(double weight_bytes, double kv_bytes, double tokens_per_s);

// The cache filled to the deepest depth once per process and reused: a prefill of the first
// `depth` prompt tokens (or a slot file's copy of one, llm/slot_file.h), kept as kv_read's copy
// and written back into each State (every thread count), then truncated to the depth a test asks
// for; the cache a test starts from is the one a prefill of the same tokens leaves. Only where the
// cache is kv_copyable() (no sliding-window ring); elsewhere every depth is prefilled.
struct DepthFill {
  size_t depth = 0;           // positions to fill (the deepest -d)
  std::string file{};         // a slot file: read when it exists, else written after the prefill
  // Filled by the first State that needs it:
  size_t positions = 0;       // 0: not filled yet
  std::vector<uint8_t> kv{};  // kv_read(0, 0, positions)
  double seconds = 0;         // the prefill's time
  bool from_file = false;     // read from `file`
  size_t threads = 0;         // the prefill's threads
};

// Seconds of one plain read of `count` buffers (the paired read; the CLI's limits code has it).
using ReadPass = std::function<double(ThreadPool& pool, const uint8_t* const* bufs, const size_t* bytes, size_t count)>;

// The runs of one State (one thread count): random prompt ids (fixed seed), the cache refilled
// to each depth only when it does not already hold it.
class BenchRuns {
 public:
  // `max_tokens`: the most positions a run fills (depth + prompt); `n_batch` ≤ s.n_batch().
  // `fill` (optional, outliving the runs): the depth fill shared by the States of one process.
  BenchRuns(const Model& model, State& s, size_t max_tokens, size_t n_batch, DepthFill* fill = nullptr);

  void warm_up();  // one token: first touch of the scratch and the pool's threads
  void to_depth(size_t d);  // the cache holds positions 0..d-1 of the prompt
  double prefill(size_t d, size_t p);  // tokens/s of p prompt tokens after d cached positions
  struct Decode {
    double tokens_per_s = 0;
    std::vector<double> paired, read_gbs;  // per token (empty without a read pass)
  };
  Decode decode(size_t d, size_t n, const ReadPass& read);  // n decodes after d positions
  double prefill_decode(size_t d, size_t pp, size_t tg);  // (pp + tg) / seconds of a prompt and its decodes
  // KV bytes attention reads per token, averaged over n decodes after d positions.
  double kv_read_per_token(size_t d, size_t n) const;

 private:
  int32_t next_id(int32_t t) const;  // the next decode input
  void prefill_to(size_t d);         // positions 0..d-1 of the prompt, from an empty cache
  void fill_once();                  // fill_'s prefill or file, copied out
  const Model& model_;
  State& s_;
  size_t n_batch_;
  DepthFill* fill_;
  std::vector<int32_t> prompt_;
  std::vector<std::pair<const uint8_t*, size_t>> spans_;
  std::vector<const uint8_t*> bufs_;
  std::vector<size_t> sizes_;
  std::vector<const PackedWeights*> read_;
};

}  // namespace qmm::llm
