// A Llama-family model built from GGUF metadata (docs/design.md §7): hyper-parameters from the
// `<arch>.*` keys, every 2-D weight packed once at load through src/matmul (the GGUF bytes
// stay in the file mapping, which is released page by page after packing), and the state of
// one generation (KV cache + scratch, sized once) with the forward pass of forward.cpp.
//
// Weight types: those the kernels take (core/weight_types.h's `native`: F32, F16, Q4_0, Q8_0,
// Q4_K, Q5_K, Q6_K, IQ4_NL) are packed as they are; the others qmm reads (Q4_1, Q5_0, Q5_1,
// BF16) are dequantized at load and repacked as Q8_0 (F16 where k is not a multiple of 32)
// and the trace says so. Anything else is an error naming the tensor and its type.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "llm/arch.h"
#include "gguf/gguf.h"
#include "llm/kv_type.h"
#include "llm/moe.h"
#include "matmul/matmul.h"
#include "matmul/tune.h"

namespace qmm::llm {

struct Config {
  std::string arch;          // general.architecture ("llama", ...)
  const ArchSpec* spec = nullptr;  // what the family does differently (arch.h)
  size_t n_embd = 0;         // model width
  size_t n_layer = 0;
  size_t n_head = 0;
  size_t n_head_kv = 0;      // grouped-query attention: n_head / n_head_kv query heads share one K/V head
  size_t head_dim = 0;       // attention.key_length, else n_embd / n_head
  size_t n_ff = 0;           // SwiGLU hidden width (0 for an MoE model without feed_forward_length)
  size_t n_vocab = 0;
  size_t n_ctx_train = 0;    // context length the model was trained with
  size_t n_rot = 0;          // RoPE dimensions per head (the first n_rot of head_dim)
  float norm_eps = 1e-5f;    // RMSNorm epsilon
  float rope_freq_base = 10000.0f;
  std::string rope_scaling;      // rope.scaling.type: none, linear or longrope
  float rope_freq_scale = 1.0f;  // linear RoPE scaling: positions are multiplied by this
  size_t n_ctx_orig = 0;         // rope.scaling.original_context_length (else n_ctx_train): LongRoPE's long factors beyond it
  float rope_attn_factor = 1.0f; // rope.scaling.attn_factor: the rotated dimensions of queries and keys are scaled by it
  size_t n_swa = 0;              // the local layers' attention window (0: every layer attends to all positions)
  size_t swa_pattern = 0;        // attention.sliding_window_pattern, else the family's: layer l is local unless l % pattern == pattern - 1 (0: every layer)
  std::vector<uint8_t> swa_layers;  // the pattern as one flag per layer (1: local), when the file gives it so
  float rope_freq_base_swa = 0;  // rope.freq_base_swa, else the family's: the local layers' RoPE base
  float attn_scale = 0;          // queries · keys are scaled by this (1/√head_dim for most)
  float attn_softcap = 0;        // scores -> cap · tanh(scores / cap) (0: none)
  float final_softcap = 0;       // the same for the logits
  float embed_scale = 1;         // token embeddings are multiplied by this
  size_t n_expert = 0;           // Mixture of experts (ArchSpec::moe): expert_count (0: a dense FFN)
  size_t n_expert_used = 0;      // expert_used_count: the experts each token runs
  size_t n_ff_exp = 0;           // expert_feed_forward_length, else n_ff / n_expert_used: one expert's hidden width
  size_t n_ff_shexp = 0;         // expert_shared_feed_forward_length, else n_ff: the shared expert's (0: none)
  size_t kv_dim() const { return n_head_kv * head_dim; }
  size_t q_dim() const { return n_head * head_dim; }
  TensorDims dims() const {  // what the tensor schema's shapes are functions of (arch.h)
    return {.embd = n_embd, .vocab = n_vocab, .q = q_dim(), .kv = kv_dim(), .ff = n_ff, .head = head_dim, .rot = n_rot,
            .expert = n_expert, .ff_exp = n_ff_exp, .ff_shexp = n_ff_shexp};
  }
  // Layer l attends to the last n_swa positions only (Gemma's local layers).
  bool is_local(size_t l) const {
    if (!swa_layers.empty()) return n_swa > 0 && swa_layers[l];
    return n_swa > 0 && (swa_pattern == 0 || l % swa_pattern != swa_pattern - 1);
  }
};

// Optional hooks and choices of a load.
struct LoadOptions {
  KernelFilter filter;                                      // which kernels may be selected
  std::optional<WeightType> convert_to;                     // re-quantize every 2-D weight (k % 32 == 0 for q4_0/q8_0)
  std::function<void(const std::string& line)> trace;      // --trace: one line per packed weight
  std::function<void(size_t done, size_t total)> progress;  // bytes of tensors processed so far
  std::optional<TuneOptions> tune;                          // choose the decode plans by measurement (matmul/tune.h)
  // The pack cache (pack_cache.h): "" its default directory, else this one; nullopt: none.
  std::optional<std::string> pack_cache;
  size_t pack_cache_min_bytes = size_t{32} << 20;           // smaller GGUF files pack in milliseconds: no cache
  std::function<void(const std::string& line)> warn;        // one-line warnings (default: stderr)
};

struct LoadStats {
  double load_seconds = 0;     // whole load (parse + pack)
  double pack_seconds = 0;     // time spent converting and packing weights
  size_t file_bytes = 0;
  size_t packed_bytes = 0;     // all packed weights
  size_t active_bytes = 0;     // the packed bytes one decoded token reads: all but the experts it does not choose
                               // (of an MoE layer's experts, expert_used_count of expert_count on average)
  size_t matmul_ops = 0;       // 2·n·k summed over the matmuls of one token (output included; MoE: the chosen experts)
  size_t int8_ops = 0;         // the part of matmul_ops on quantized (int8-kernel) weights
  std::string converted;       // weight types the kernels do not take, as "q4_1 -> q8_0, ..." ("" if none)
  std::string pack_file;       // the pack cache file ("" without one)
  bool from_pack_cache = false;  // every weight was mapped from it (no repack)
  double pack_write_seconds = 0; // writing it (a load that had to pack)
  double tune_seconds = 0;     // choosing the decode plans
};

// Weights applied to the same input whose outputs sit side by side (Q|K|V, gate|up): one
// packed matrix over the concatenated rows when the parts end up in one type (one matmul
// instead of three), else one per part writing its columns of the same output rows.
struct Fused {
  std::vector<PackedWeights> parts;
  size_t n() const {
    size_t n = 0;
    for (const PackedWeights& p : parts) n += p.n();
    return n;
  }
};

// A Mixture-of-Experts layer's FFN (moe.h): the router and each expert's weights, packed per expert.
struct Experts {
  PackedWeights router;              // ffn_gate_inp: n_embd -> n_expert
  std::vector<Fused> gate_up;        // per expert: [Wgate; Wup] (its slices of ffn_gate_exps, ffn_up_exps): n_embd -> 2·n_ff_exp
  std::vector<PackedWeights> down;   // per expert: its slice of ffn_down_exps, n_ff_exp -> n_embd
  std::vector<float> shared_gate;    // ffn_gate_inp_shexp [n_embd], or empty (no shared expert)
  Fused shared_gate_up;              // [ffn_gate_shexp; ffn_up_shexp]: n_embd -> 2·n_ff_shexp
  PackedWeights shared_down;         // ffn_down_shexp: n_ff_shexp -> n_embd
};

// What follows a projection, per output column: y = y · scale + bias (the weights' per-tensor
// ".scale" spread over their columns, then their ".bias"), or (y + bias) · scale where llama.cpp's
// graph adds the bias first (its FFN); either may be empty when the file has none.
struct Affine {
  std::vector<float> scale, bias;
  bool bias_first = false;
  bool empty() const { return scale.empty() && bias.empty(); }
};

struct Layer {
  std::vector<float> attn_norm, ffn_norm;  // RMSNorm gains [n_embd]
  Fused qkv;                               // [Wq; Wk; Wv]: n_embd -> q_dim + 2·kv_dim
  Affine qkv_out;                          // [q | k | v] scales and biases
  std::vector<float> q_norm, k_norm;       // per-head RMSNorm gains [head_dim] (OLMoE: [q_dim], [kv_dim]), or empty
  PackedWeights wo;                        // attention output projection: q_dim -> n_embd
  Affine wo_out;
  std::vector<float> post_attn_norm;       // RMSNorm of the attention output [n_embd], or empty
  Fused gate_up;                           // [Wgate; Wup]: n_embd -> 2·n_ff (dense FFN)
  Affine gate_up_out;                      // [gate | up], before the activation
  PackedWeights w_down;                    // FFN down projection (dense FFN)
  Affine down_out;
  Experts moe;                             // the FFN of an MoE layer instead (its experts' lists empty otherwise)
  std::vector<float> post_ffn_norm;        // RMSNorm of the FFN output [n_embd], or empty
};

class Model {
 public:
  static Model load(const std::string& path, const LoadOptions& opt, ThreadPool& pool);

  const Config& config() const { return cfg_; }
  const gguf::File& file() const { return file_; }
  const LoadStats& stats() const { return stats_; }
  const std::vector<Layer>& layers() const { return layers_; }
  const std::vector<float>& output_norm() const { return output_norm_; }
  const PackedWeights& output() const { return output_; }
  const Affine& output_out() const { return output_out_; }  // output.scale, output.bias
  // Per rotated pair i (0..n_rot/2-1): the angle per position, base^(-2i/n_rot) · scale / factor_i
  // (the local layers' own base where the family has one), for a context of n_ctx positions per
  // sequence: LongRoPE's long factors when n_ctx rounded up to a multiple of 256 (as llama.cpp
  // pads it) exceeds n_ctx_orig, else its short ones (llama.cpp's get_rope_factors), or Llama 3's
  // rope_freqs.
  const std::vector<float>& rope_freqs(bool local, size_t n_ctx) const {
    if (local) return rope_freqs_local_;
    return !rope_freqs_long_.empty() && (n_ctx + 255) / 256 * 256 > cfg_.n_ctx_orig ? rope_freqs_long_ : rope_freqs_;
  }
  // Row `token` of the token embedding as F32 (dequantized from a copy of the tensor).
  void embed(int32_t token, float* out) const;
  void check_token(int32_t token) const;  // throws unless 0 <= token < n_vocab
  // Every packed weight of one forward token, in order (for statistics and benchmarks).
  std::vector<const PackedWeights*> weights() const;
  // The decode plans chosen at load or by tune() (empty classes when nothing tuned).
  const TuneReport& tuning() const { return tuning_; }
  // Chooses the decode plans for `pool`'s thread count (matmul/tune.h); `filter`: the
  // kernels that may be chosen. LoadOptions::tune does it at load.
  const TuneReport& tune(ThreadPool& pool, const KernelFilter& filter, const TuneOptions& opt);
  // The whole-step pass over the plans tune() set (matmul/tune.h tune_steps): each candidate
  // decodes kTuneSteps tokens from an empty cache of its own, for `pool`'s thread count (qmm tune).
  static constexpr size_t kTuneSteps = 4;
  const TuneReport& tune_steps(ThreadPool& pool, const KernelFilter& filter, const StepTuneOptions& opt);

 private:
  explicit Model(gguf::File f) : file_(std::move(f)) {}
  void write_pack_cache(const std::string& key, const LoadOptions& opt);
  gguf::File file_;
  Config cfg_;
  LoadStats stats_;
  const gguf::TensorInfo* tok_embd_ = nullptr;
  AlignedBuffer tok_embd_copy_;   // a copy: the GGUF mapping may be truncated under us
  const uint8_t* tok_embd_bytes_ = nullptr;  // the copy, or the pack cache's rows
  std::shared_ptr<const void> pack_;         // the pack cache mapping the weights live in
  size_t tok_row_bytes_ = 0;
  std::vector<Layer> layers_;
  std::vector<float> output_norm_;
  PackedWeights output_;
  Affine output_out_;
  std::vector<float> rope_freqs_, rope_freqs_local_, rope_freqs_long_;
  TuneReport tuning_;
};

// One row of a batch: the token goes to sequence `seq` at position `pos`, and the forward pass
// returns logits for it when `logits` is set. A sequence's rows in one batch must have
// consecutive positions, the first at most State::pos(seq) (an earlier one rewinds its cache).
struct BatchRow {
  uint32_t seq = 0;
  uint32_t pos = 0;
  bool logits = false;
};

// The state of up to n_seq generations: one KV cache per sequence and the scratch buffers of
// batches of up to n_batch rows, sized once (no allocation per token). Every layer's cache is a
// ring of positions (position p in slot p % slots): n_ctx slots on a layer that attends to all
// positions (so it never wraps), and on a sliding-window layer only min(n_ctx, window + n_batch - 1),
// the window of the last row of a batch step plus the step's other rows (llama.cpp sizes its
// SWA cache the same way, window + ubatch): all of a step's keys are written before any of its
// queries attend, so its first row still finds its whole window. A sequence may still run to n_ctx.
// Each cache row (one position of one K/V head) is stored as kv.k / kv.v (kv_type.h; F16 by
// default); F32 caches attend through attend_heads, the others through attend_chunk.
class State {
 public:
  // `ctx` (its thread pool and matmul scratch) must outlive the state. Throws when a quantized
  // cache type does not fit the head size.
  State(const Model& model, size_t n_ctx, size_t n_batch, Context& ctx, size_t n_seq = 1, KvTypes kv = {});
  // The bytes of KV cache one position of one sequence takes in a layer that keeps every
  // position, summed over the layers (K and V).
  static size_t kv_bytes_per_token(const Config& c, KvTypes kv);

  size_t n_ctx() const { return n_ctx_; }      // positions per sequence
  size_t n_batch() const { return n_batch_; }  // rows per forward pass
  size_t n_seq() const { return pos_.size(); }
  size_t pos(size_t seq = 0) const { return pos_.at(seq); }  // positions cached for `seq`
  // Keeps the first n (≤ pos(seq)) cached positions of `seq` and returns n, or 0 (an empty
  // cache) when a sliding-window layer's ring no longer holds the window before position n.
  size_t truncate(size_t seq, size_t n);
  // Whether `seq`'s next rows may start at position `pos` (≤ pos(seq)): every window before it is still cached.
  bool can_resume(size_t seq, size_t pos) const;
  void reset() {
    std::fill(pos_.begin(), pos_.end(), size_t{0});
    std::fill(held_.begin(), held_.end(), size_t{0});
  }
  size_t bytes() const;                 // KV caches + scratch
  size_t kv_bytes() const;              // KV caches
  size_t window_slots() const { return ring_; }  // slots of a sliding-window layer's ring (n_ctx without windows)
  KvTypes kv_types() const { return kv_types_; }
  // KV bytes attention reads for one new token of a sequence holding `pos` positions (every layer).
  size_t kv_bytes_read(size_t pos) const;
  // Where those bytes are for sequence `seq` as it stands (the token at pos(seq) included):
  // one (start, bytes) span per layer, K/V head and piece of a ring (benchmarks read them).
  void kv_spans(size_t seq, std::vector<std::pair<const uint8_t*, size_t>>& out) const;
  Context& ctx() { return *ctx_; }
  const MoeScratch& moe() const { return moe_; }  // the experts the last batch chose (MoE models)
  // The last forward()'s hidden states before the final norm, [rows, n_embd] in row order (embeddings).
  const float* hidden() const { return x_.data(); }

  // Copies of cached positions, for the prompt cache and slot files (kv_copy.cpp). A block of n
  // positions is kv_copy_bytes(n) bytes: K then V rows of each layer and K/V head in turn, as the
  // cache stores them (any KvTypes; quantized K stays rotated). Only where no layer is a ring
  // that wraps (kv_copyable(): no sliding window, or n_ctx within the ring).
  bool kv_copyable() const { return ring_ == n_ctx_; }
  size_t kv_copy_bytes(size_t n) const { return n * (layer_kv_.size() - 1) * n_head_kv_ * (k_row_ + v_row_); }
  // out = positions [pos, pos + n) of `seq` (pos + n <= pos(seq)).
  void kv_read(size_t seq, size_t pos, size_t n, uint8_t* out) const;
  // Positions [pos, pos + n) of `seq` = in (pos <= pos(seq)); afterwards pos(seq) == pos + n.
  void kv_write(size_t seq, size_t pos, size_t n, const uint8_t* in);

 private:
  friend const float* forward(const Model& model, State& s, const int32_t* tokens, const BatchRow* rows, size_t n);
  friend const float* forward(const Model& model, State& s, const int32_t* tokens, size_t n);
  friend struct ForwardPass;  // (forward.cpp: the steps of forward())
  struct Span {  // consecutive rows of one sequence at consecutive positions
    size_t row, rows, seq, pos;
    size_t chunk0 = 0, chunks = 0;  // attention (forward.cpp): this layer's split-KV partials from split_ chunk chunk0 (0 chunks: not split)
  };
  size_t n_ctx_, n_batch_;
  size_t window_ = 0, ring_ = 0;                    // the sliding window (0: none) and its ring's slots
  std::vector<size_t> pos_, next_pos_;              // per sequence; next_pos_: the batch being checked
  std::vector<size_t> held_;                        // per sequence: the first position the rings still hold
  Context* ctx_;
  std::vector<float> x_, xb_, xb2_, qkv_, hb_;      // activations of the batch, row-major [n_batch, width]
  std::vector<float> att_;                          // F32 caches: attention weights, one row of n_ctx per thread
  std::vector<float> chunk_;                        // other caches: per thread attend_chunk's scratch, a partial and an accumulator
  std::vector<float> split_;                        // partials of the decode rows split over chunks [chunks, n_head, partial]
  std::vector<float> rope_;                         // cos, sin per batch row and rotated pair [2 (global, local), n_batch, n_rot]
  std::vector<float> logits_;                       // [n_seq, n_vocab]: the rows that asked for logits
  std::vector<size_t> layer_kv_;                    // [n_layer + 1]: the first cache row of layer l's [n_head_kv, slots] in a sequence's cache
  KvTypes kv_types_;
  size_t k_row_ = 0, v_row_ = 0;                    // bytes of one cache row
  size_t n_local_ = 0, n_head_kv_ = 0;              // sliding-window layers, K/V heads
  std::vector<bool> local_;                         // per layer: a sliding-window layer
  AlignedBuffer key_cache_, value_cache_;           // [n_seq, layer_kv_.back()] rows
  std::vector<BatchRow> rows_;                      // forward(tokens, n)'s rows
  std::vector<Span> spans_;                         // attention work of the batch
  std::vector<size_t> split_spans_;                 // the spans whose positions a layer's attention splits (chunk0 ascending)
  MoeScratch moe_;                                  // the MoE block's scratch (MoE models)
};

// Runs one batch of n rows (n ≤ n_batch): row i puts tokens[i] at rows[i].pos of sequence
// rows[i].seq, attending to that sequence's cache only. Rows of several sequences share every
// matmul (one GEMM over all rows reads the weights once). Returns the logits of the rows with
// `logits` set, in row order, [n_out, n_vocab] (n_out ≤ n_seq); afterwards pos(seq) is the last
// row's position + 1 for every sequence in the batch. Bad rows throw before anything changes.
const float* forward(const Model& model, State& s, const int32_t* tokens, const BatchRow* rows, size_t n);

// Sequence 0's next n tokens (positions pos()..pos()+n-1) as one batch; the logits of the last one.
const float* forward(const Model& model, State& s, const int32_t* tokens, size_t n);

}  // namespace qmm::llm
