// The measurements of `qmm bench model` (bench_runs.h).
#include "llm/bench_runs.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>

#include "core/error.h"
#include "llm/moe.h"
#include "llm/slot_file.h"

namespace qmm::llm {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

TokenCost token_cost(const Model& model) {
  const LoadStats& st = model.stats();
  return {static_cast<double>(st.active_bytes) + static_cast<double>(model.config().n_embd) * 4,
          static_cast<double>(st.int8_ops), static_cast<double>(st.matmul_ops - st.int8_ops)};
}

double decode_bound(double bytes, double dram_gbs) { return dram_gbs > 0 && bytes > 0 ? dram_gbs * 1e9 / bytes : 0; }

double prefill_bound(const TokenCost& cost, double int8_gops, double fp32_gflops) {
  const double sec = (int8_gops > 0 ? cost.int8_ops / (int8_gops * 1e9) : 0) + (fp32_gflops > 0 ? cost.float_ops / (fp32_gflops * 1e9) : 0);
  return sec > 0 ? 1.0 / sec : 0;
}

double effective_gbs(double weight_bytes, double kv_bytes, double tokens_per_s) { return (weight_bytes + kv_bytes) * tokens_per_s / 1e9; }

BenchRuns::BenchRuns(const Model& model, State& s, size_t max_tokens, size_t n_batch, DepthFill* fill)
    : model_(model), s_(s), n_batch_(std::max<size_t>(1, std::min(n_batch, s.n_batch()))), fill_(fill), prompt_(std::max<size_t>(max_tokens, 1)) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(model.config().n_vocab - 1));
  for (int32_t& t : prompt_) t = tok(rng);
}

int32_t BenchRuns::next_id(int32_t t) const {
  return static_cast<int32_t>((static_cast<size_t>(t) * 7 + 1) % model_.config().n_vocab);
}

void BenchRuns::warm_up() { forward(model_, s_, prompt_.data(), 1); }

void BenchRuns::prefill_to(size_t d) {
  s_.reset();
  for (size_t p = 0; p < d; p += n_batch_) forward(model_, s_, prompt_.data() + p, std::min(n_batch_, d - p));
}

void BenchRuns::fill_once() {
  DepthFill& f = *fill_;
  const size_t d = f.depth;
  if (!f.file.empty() && std::filesystem::exists(f.file)) {
    const std::vector<int32_t> tokens = load_slot_file(f.file, model_, s_, 0);
    check_arg(tokens.size() >= d, "depth file '" + f.file + "' holds " + std::to_string(tokens.size()) + " positions, -d asks for " +
                                      std::to_string(d));
    check_arg(std::equal(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(d), prompt_.begin()),
              "depth file '" + f.file + "' was filled from other tokens than bench model's prompt");
    s_.truncate(0, d);
    f.from_file = true;
  } else {
    const double t0 = now();
    prefill_to(d);
    f.seconds = now() - t0;
    if (!f.file.empty()) save_slot_file(f.file, model_, s_, 0, {prompt_.data(), d});
  }
  f.threads = static_cast<size_t>(s_.ctx().pool().threads());
  f.kv.resize(s_.kv_copy_bytes(d));
  s_.kv_read(0, 0, d, f.kv.data());
  f.positions = d;
}

void BenchRuns::to_depth(size_t d) {
  if (s_.pos() >= d && s_.truncate(0, d) == d) return;
  if (fill_ && d > 0 && d <= fill_->depth && s_.kv_copyable()) {
    if (fill_->positions == 0) fill_once();
    s_.reset();
    s_.kv_write(0, 0, fill_->positions, fill_->kv.data());
    if (s_.truncate(0, d) == d) return;
  }
  prefill_to(d);
}

double BenchRuns::prefill(size_t d, size_t p) {
  to_depth(d);
  const double t0 = now();
  forward(model_, s_, prompt_.data() + d, p);
  return static_cast<double>(p) / (now() - t0);
}

BenchRuns::Decode BenchRuns::decode(size_t d, size_t n, const ReadPass& read) {
  to_depth(d);
  Decode out;
  int32_t next = prompt_[0];
  double total = 0;
  for (size_t j = 0; j < n; ++j) {
    s_.kv_spans(0, spans_);  // what this token's attention reads
    const double t0 = now();
    forward(model_, s_, &next, 1);
    const double token_s = now() - t0;
    total += token_s;
    next = next_id(next);
    if (!read) continue;
    // Paired with each token: a plain read of the packed weights and of the KV bytes it read, at the same moment.
    decode_weights(model_, s_, read_);
    bufs_.clear(), sizes_.clear();
    size_t bytes = 0;
    for (const PackedWeights* w : read_) bufs_.push_back(w->data()), sizes_.push_back(w->bytes()), bytes += w->bytes();
    for (const auto& [b, len] : spans_) {  // (widened to whole cache lines: the read pass loads aligned lines)
      const auto* a = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(b) / 64 * 64);
      bufs_.push_back(a), sizes_.push_back((static_cast<size_t>(b - a) + len + 63) / 64 * 64), bytes += len;
    }
    const double tr = read(s_.ctx().pool(), bufs_.data(), sizes_.data(), bufs_.size());
    out.paired.push_back(tr / token_s);
    out.read_gbs.push_back(static_cast<double>(bytes) / tr / 1e9);
  }
  out.tokens_per_s = static_cast<double>(n) / total;
  return out;
}

double BenchRuns::prefill_decode(size_t d, size_t pp, size_t tg) {
  to_depth(d);
  const double t0 = now();
  forward(model_, s_, prompt_.data() + d, pp);
  int32_t next = prompt_[0];
  for (size_t j = 0; j < tg; ++j) {
    forward(model_, s_, &next, 1);
    next = next_id(next);
  }
  return static_cast<double>(pp + tg) / (now() - t0);
}

double BenchRuns::kv_read_per_token(size_t d, size_t n) const {
  double kv = 0;
  for (size_t j = 0; j < n; ++j) kv += static_cast<double>(s_.kv_bytes_read(d + j)) / static_cast<double>(n);
  return kv;
}

}  // namespace qmm::llm
