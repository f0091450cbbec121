// The forward pass over a batch of tokens (prefill: the whole prompt; decode: one token),
// readable top to bottom like llama2.c's forward(), for every family of arch.h: where the
// families differ (biases, q/k norms, post-norms, RoPE variant, GeGLU, windows, soft-caps) the
// step runs or not by the model's ArchSpec. Matmuls go through src/matmul (GEMM kernels when
// m > 1, GEMV when m == 1); everything else is plain loops split over the context's thread pool
// by rows or heads.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/error.h"
#include "llm/attention/attend_kernel.h"
#include "llm/model.h"
#include "llm/ops.h"

namespace qmm::llm {
namespace {

// Rotates the first n_rot dimensions of each head of a row by pair i's angle (cos, sin in cs):
// pairs (2i, 2i+1) for llama.cpp's "normal" RoPE, which GGUF's permuted Q/K weights of the llama
// arch expect, or (i, i + n_rot/2) for NeoX RoPE (Qwen, Phi-3, Gemma).
inline void rope(float* v, size_t n_heads, size_t head_dim, size_t n_rot, const float* cs, Rope kind) {
  const size_t step = kind == Rope::neox ? 1 : 2, other = kind == Rope::neox ? n_rot / 2 : 1;
  for (size_t h = 0; h < n_heads; ++h) {
    float* x = v + h * head_dim;
    for (size_t i = 0; i < n_rot / 2; ++i) {
      const float c = cs[2 * i], s = cs[2 * i + 1];
      float& a = x[i * step];
      float& b = x[i * step + other];
      const float x0 = a, x1 = b;
      a = x0 * c - x1 * s;
      b = x0 * s + x1 * c;
    }
  }
}

// RMSNorm of each head_dim-wide head of a row, in place.
inline void head_norms(float* v, size_t n_heads, size_t head_dim, const float* gain, float eps) {
  for (size_t h = 0; h < n_heads; ++h) rmsnorm(v + h * head_dim, v + h * head_dim, gain, head_dim, eps);
}

// x[i] += y[i]
inline void add(float* x, const float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] += y[i];
}

// f(begin, end) over [0, count) in chunks of at least `grain`, across the pool.
template <class F>
void parallel_range(ThreadPool& pool, size_t count, size_t grain, F&& f) {
  const size_t tasks = std::max<size_t>(1, std::min(count / std::max<size_t>(grain, 1), static_cast<size_t>(pool.threads()) * 4));
  const size_t per = (count + tasks - 1) / tasks;
  pool.parallel_for(tasks, [&](size_t t, int) {
    const size_t b = t * per, e = std::min(count, b + per);
    if (b < e) f(b, e);
  });
}

// out[i] = rmsnorm(x[i]) · gain for the m rows of width dim (in place when out == x).
inline void norm_rows(ThreadPool& pool, float* out, const float* x, const float* gain, size_t m, size_t dim, float eps) {
  parallel_range(pool, m, 1, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) rmsnorm(out + i * dim, x + i * dim, gain, dim, eps);
  });
}

// row = row · a.scale + a.bias, or (row + a.bias) · a.scale (per column; either may be empty).
inline void apply(const Affine& a, float* row, size_t n) {
  if (a.bias_first && !a.bias.empty()) add(row, a.bias.data(), n);
  if (!a.scale.empty()) {
    for (size_t j = 0; j < n; ++j) row[j] *= a.scale[j];
  }
  if (!a.bias_first && !a.bias.empty()) add(row, a.bias.data(), n);
}

// The same for m rows of n columns, `stride` floats apart.
void apply_rows(ThreadPool& pool, const Affine& a, float* rows, size_t m, size_t n, size_t stride) {
  if (a.empty()) return;
  parallel_range(pool, m, 4, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) apply(a, rows + i * stride, n);
  });
}

// dst[m, w.n()] = src[m, w.k()] · Wᵀ (row strides in floats). `next`: the weights multiplied
// next (their start is prefetched by idle threads in between).
inline void linear(const PackedWeights& w, size_t m, const float* src, size_t src_stride, float* dst, size_t dst_stride,
                   Context& ctx, const PackedWeights* next) {
  matmul(w, m, src, src_stride * sizeof(float), dst, dst_stride * sizeof(float), -INFINITY, INFINITY, ctx, next);
}

// The same for weights side by side: each part writes its columns of dst.
inline void linear(const Fused& w, size_t m, const float* src, size_t src_stride, float* dst, size_t dst_stride,
                   Context& ctx, const PackedWeights* next) {
  size_t col = 0;
  for (size_t i = 0; i < w.parts.size(); ++i) {
    linear(w.parts[i], m, src, src_stride, dst + col, dst_stride, ctx, i + 1 < w.parts.size() ? &w.parts[i + 1] : next);
    col += w.parts[i].n();
  }
}

}  // namespace

State::State(const Model& model, size_t n_ctx, size_t n_batch, Context& ctx, size_t n_seq, KvTypes kv)
    : n_ctx_(n_ctx), n_batch_(std::min(n_batch, n_ctx * std::max<size_t>(n_seq, 1))), pos_(n_seq), next_pos_(n_seq), held_(n_seq),
      ctx_(&ctx), kv_types_(kv) {
  const Config& c = model.config();
  check_arg(n_ctx >= 1 && n_batch >= 1 && n_seq >= 1, "context, batch and sequence counts must be at least 1");
  check_arg(n_ctx <= (size_t{1} << 24), "context size " + std::to_string(n_ctx) + " is too large");
  check_arg(n_seq <= 4096, "at most 4096 sequences, not " + std::to_string(n_seq));
  for (KvType t : {kv.k, kv.v}) {
    check_arg(kv_fits(t, c.head_dim), std::string("a ") + kv_type_name(t) + " KV cache needs a head size that is a multiple of 32 (this model's is " +
                                          std::to_string(c.head_dim) + ")");
  }
  // The attention kernel is chosen here, on the caller's thread: a bad QMM_ATTENTION is this
  // constructor's error, not an exception inside a pool worker.
  if (kv.k != KvType::f32 || kv.v != KvType::f32) attend_kernel();
  const size_t b = n_batch_, hd = c.head_dim, threads = static_cast<size_t>(ctx.threads());
  x_.resize(b * c.n_embd);
  xb_.resize(b * std::max(c.n_embd, c.q_dim()));
  xb2_.resize(b * c.n_embd);
  qkv_.resize(b * (c.q_dim() + 2 * c.kv_dim()));
  hb_.resize(c.n_expert ? 0 : b * 2 * c.n_ff);
  moe_.size_for(c, b);
  if (kv.k == KvType::f32 && kv.v == KvType::f32) {
    att_.resize(threads * kAttendHeads * n_ctx);
  } else {  // per thread: attend_chunk's scratch, then a partial and an accumulator of up to kAttendTaskRows rows x kAttendHeads heads
    chunk_.resize(threads * (attend_chunk_scratch(hd) + 2 * kAttendTaskRows * kAttendHeads * attend_partial_size(hd)));
    // Split-KV partials of a step's decode rows (attention() below): room for one row of up to
    // n_ctx positions per sequence; a step with more single-row spans runs the rest unsplit.
    const size_t chunks = checked_mul(std::min(n_batch_, n_seq), (n_ctx + kAttendChunk - 1) / kAttendChunk, "attention partials");
    split_.resize(checked_mul(chunks, c.n_head * attend_partial_size(hd), "attention partials"));
  }
  rope_.resize(2 * b * c.n_rot);
  logits_.resize(checked_mul(n_seq, c.n_vocab, "logits"));
  window_ = c.n_swa;
  ring_ = window_ ? std::min(n_ctx, window_ + n_batch_ - 1) : n_ctx;
  layer_kv_.assign(1, 0);
  for (size_t l = 0; l < c.n_layer; ++l) {
    n_local_ += c.is_local(l);
    local_.push_back(c.is_local(l));
    layer_kv_.push_back(layer_kv_.back() + checked_mul(c.is_local(l) ? ring_ : n_ctx, c.n_head_kv, "KV cache"));
  }
  n_head_kv_ = c.n_head_kv;
  k_row_ = kv_row_bytes(kv.k, hd);
  v_row_ = kv_row_bytes(kv.v, hd);
  const size_t rows = checked_mul(n_seq, layer_kv_.back(), "KV cache");
  key_cache_.resize(checked_mul(rows, k_row_, "KV cache"));
  value_cache_.resize(checked_mul(rows, v_row_, "KV cache"));
  // 2 MiB pages, as the packed weights: a decode step at depth streams the cache from DRAM, and
  // on 4 KiB pages each chunk's rows cross a page every 32 F16 rows (decode_stream: 20-30 % faster).
  advise_huge_pages(key_cache_.data(), key_cache_.size());
  advise_huge_pages(value_cache_.data(), value_cache_.size());
  rows_.resize(b);
  spans_.reserve(b);
  split_spans_.reserve(b);
}

size_t State::kv_bytes_per_token(const Config& c, KvTypes kv) {
  return c.n_layer * c.n_head_kv * (kv_row_bytes(kv.k, c.head_dim) + kv_row_bytes(kv.v, c.head_dim));
}

size_t State::kv_bytes_read(size_t pos) const {
  const size_t global = layer_kv_.size() - 1 - n_local_, len = pos + 1;
  return (global * len + n_local_ * (window_ ? std::min(len, window_) : len)) * n_head_kv_ * (k_row_ + v_row_);
}

void State::kv_spans(size_t seq, std::vector<std::pair<const uint8_t*, size_t>>& out) const {
  out.clear();
  const size_t len = std::min(pos_.at(seq) + 1, n_ctx_), seq_rows = layer_kv_.back();
  for (size_t l = 0; l + 1 < layer_kv_.size(); ++l) {
    const size_t slots = (layer_kv_[l + 1] - layer_kv_[l]) / n_head_kv_, n = local_[l] ? std::min(len, window_) : len;
    const size_t first = (len - n) % slots;  // the ring's oldest attended slot: [first, first + n) wrapping
    for (size_t g = 0; g < n_head_kv_; ++g) {
      const size_t row = seq * seq_rows + layer_kv_[l] + g * slots;
      for (const auto& [buf, rb] : {std::pair{key_cache_.data(), k_row_}, std::pair{value_cache_.data(), v_row_}}) {
        const size_t a = std::min(n, slots - first);
        out.emplace_back(buf + (row + first) * rb, a * rb);
        if (a < n) out.emplace_back(buf + row * rb, (n - a) * rb);
      }
    }
  }
}

bool State::can_resume(size_t seq, size_t pos) const {
  const size_t need = window_ && pos >= window_ ? pos + 1 - window_ : 0;  // the first position the window of `pos` reads
  return pos <= pos_.at(seq) && (pos == 0 || need >= held_[seq]);
}

size_t State::truncate(size_t seq, size_t n) {
  check_arg(seq < pos_.size() && n <= pos_[seq], "truncate: no such sequence or position");
  pos_[seq] = can_resume(seq, n) ? n : 0;
  if (pos_[seq] == 0) held_[seq] = 0;
  return pos_[seq];
}

size_t State::kv_bytes() const { return key_cache_.size() + value_cache_.size(); }

size_t State::bytes() const {
  size_t floats = 0;
  for (const auto* v : {&x_, &xb_, &xb2_, &qkv_, &hb_, &att_, &chunk_, &split_, &rope_, &logits_}) floats += v->size();
  return floats * sizeof(float) + moe_.bytes() + kv_bytes();
}

const float* forward(const Model& model, State& s, const int32_t* tokens, size_t n) {
  if (n < 1 || n > s.n_batch_) {  // (messages built only on failure: no allocation per token)
    fail(Status::invalid_argument, "a batch holds 1.." + std::to_string(s.n_batch_) + " tokens, got " + std::to_string(n));
  }
  if (s.pos_[0] + n > s.n_ctx_) fail(Status::invalid_argument, "the context is full (" + std::to_string(s.n_ctx_) + " tokens)");
  for (size_t i = 0; i < n; ++i) s.rows_[i] = {0, static_cast<uint32_t>(s.pos_[0] + i), i + 1 == n};
  return forward(model, s, tokens, s.rows_.data(), n);
}

// One forward pass's steps over the state, in the order forward() below calls them.
struct ForwardPass {
  const Model& model;
  State& s;
  const BatchRow* rows;
  size_t m;
  const Config& c = model.config();
  Context& ctx = *s.ctx_;
  ThreadPool& pool = ctx.pool();
  const size_t dim = c.n_embd, q_dim = c.q_dim(), kv_dim = c.kv_dim(), hd = c.head_dim, qkv_dim = q_dim + 2 * kv_dim;
  const size_t seq_kv = s.layer_kv_.back();  // cache rows of one sequence

  // Checks the rows and groups them into spans (consecutive positions of one sequence) for
  // attention; returns how many rows ask for logits.
  size_t plan(const int32_t* tokens) {
    if (m < 1 || m > s.n_batch_) {  // (messages built only on failure: no allocation per token)
      fail(Status::invalid_argument, "a batch holds 1.." + std::to_string(s.n_batch_) + " tokens, got " + std::to_string(m));
    }
    std::copy(s.pos_.begin(), s.pos_.end(), s.next_pos_.begin());
    s.spans_.clear();
    size_t n_out = 0;
    for (size_t i = 0; i < m; ++i) {
      const BatchRow& r = rows[i];
      if (r.seq >= s.pos_.size()) fail(Status::invalid_argument, "batch row " + std::to_string(i) + ": no sequence " + std::to_string(r.seq));
      const bool continues = !s.spans_.empty() && s.spans_.back().seq == r.seq && s.spans_.back().pos + s.spans_.back().rows == r.pos;
      const bool earlier = std::any_of(s.spans_.begin(), s.spans_.end(), [&](const State::Span& sp) { return sp.seq == r.seq; });
      if (r.pos >= s.n_ctx_) fail(Status::invalid_argument, "the context is full (" + std::to_string(s.n_ctx_) + " tokens)");
      if (earlier ? r.pos != s.next_pos_[r.seq] : !s.can_resume(r.seq, r.pos)) {
        fail(Status::invalid_argument, "batch row " + std::to_string(i) + ": position " + std::to_string(r.pos) + " of sequence " +
                                           std::to_string(r.seq) + " does not follow its cache");
      }
      if (continues) {
        ++s.spans_.back().rows;
      } else {
        s.spans_.push_back({i, 1, r.seq, r.pos});
      }
      s.next_pos_[r.seq] = r.pos + 1;
      n_out += r.logits;
    }
    if (n_out > s.pos_.size()) fail(Status::invalid_argument, "a batch returns logits for at most one row per sequence");
    for (size_t i = 0; i < m; ++i) model.check_token(tokens[i]);
    return n_out;
  }

  // Token embeddings: x[i] = token_embd[tokens[i]] (· √dim for Gemma)
  void embed(const int32_t* tokens, float* x) {
    for (size_t i = 0; i < m; ++i) {
      model.embed(tokens[i], x + i * dim);
      if (c.embed_scale != 1.0f) std::transform(x + i * dim, x + (i + 1) * dim, x + i * dim, [&](float e) { return e * c.embed_scale; });
    }
  }

  // RoPE angles of the rows' positions, shared by every layer: (cos, sin) per rotated pair, for
  // the global layers and (with their own base) the local ones, times the attention factor
  // (ggml's rope scales both by it: the rotated dimensions of queries and keys).
  void rope_angles() {
    for (size_t local = 0; local < 2; ++local) {
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < c.n_rot / 2; ++j) {
          const float theta = static_cast<float>(rows[i].pos) * model.rope_freqs(local, s.n_ctx_)[j];
          s.rope_[(local * s.n_batch_ + i) * c.n_rot + 2 * j] = std::cos(theta) * c.rope_attn_factor;
          s.rope_[(local * s.n_batch_ + i) * c.n_rot + 2 * j + 1] = std::sin(theta) * c.rope_attn_factor;
        }
      }
    }
  }

  // Layer l's Q/K/V of the rows (qkv_, [m, q_dim + 2·kv_dim]) made ready for attention:
  // biases (Qwen 2), per-head RMSNorm of queries and keys (Qwen 3, Gemma 3), then RoPE on the
  // queries and keys; each row's key and value go to its sequence's cache at its position.
  void qkv_rows(const Layer& L, size_t l) {
    float* qkv = s.qkv_.data();
    const bool local = c.is_local(l), rotate = kv_rotated(s.kv_types_.k);
    // Sequence q's cache of this layer at q·seq_kv + layer_kv: per K/V head a ring of `slots`
    // positions of head_dim values (position p in slot p % slots), so one head's keys and values
    // are each one contiguous stream for attention.
    const size_t layer_kv = s.layer_kv_[l], slots = local ? s.ring_ : s.n_ctx_;
    const float* rope_cs = s.rope_.data() + (local ? s.n_batch_ * c.n_rot : 0);
    parallel_range(pool, m, 4, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        float* row = qkv + i * qkv_dim;
        apply(L.qkv_out, row, qkv_dim);
        if (!L.q_norm.empty()) {
          head_norms(row, q_dim / L.q_norm.size(), L.q_norm.size(), L.q_norm.data(), c.norm_eps);  // (OLMoE: one "head" of q_dim)
          head_norms(row + q_dim, kv_dim / L.k_norm.size(), L.k_norm.size(), L.k_norm.data(), c.norm_eps);
        }
        rope(row, c.n_head, hd, c.n_rot, rope_cs + i * c.n_rot, c.spec->rope);
        rope(row + q_dim, c.n_head_kv, hd, c.n_rot, rope_cs + i * c.n_rot, c.spec->rope);
        // Quantized keys are stored rotated, so the queries meet them rotated (kv_type.h).
        if (rotate) {
          for (size_t h = 0; h < c.n_head + c.n_head_kv; ++h) kv_rotate(row + h * hd, hd);
        }
        const size_t at = rows[i].seq * seq_kv + layer_kv + rows[i].pos % slots;
        for (size_t g = 0; g < c.n_head_kv; ++g) {
          kv_store(s.kv_types_.k, row + q_dim + g * hd, s.key_cache_.data() + (at + g * slots) * s.k_row_, hd);
          kv_store(s.kv_types_.v, row + q_dim + kv_dim + g * hd, s.value_cache_.data() + (at + g * slots) * s.v_row_, hd);
        }
      }
    });
  }

  // Layer l's grouped-query attention: xb[i] = the attention of row i's queries to its
  // sequence's cached positions, [m, q_dim].
  void attention(size_t l, float* xb) {
    const float* qkv = s.qkv_.data();
    const bool local = c.is_local(l);  // attends to the last n_swa positions only
    const size_t layer_kv = s.layer_kv_[l], slots = local ? s.ring_ : s.n_ctx_;
    const size_t group = c.n_head / c.n_head_kv;  // query heads per K/V head
    // Attention tasks: each span in pieces of up to rows_per_task rows, times the head groups
    // (a span split over its chunks, below, has no pieces).
    const size_t rows_per_task = std::max<size_t>(1, std::min<size_t>(kAttendTaskRows, m / 4));
    auto pieces = [&](const State::Span& sp) { return sp.chunks ? 0 : (sp.rows + rows_per_task - 1) / rows_per_task; };
    size_t work = 0;
    for (const State::Span& sp : s.spans_) work += c.n_head * sp.rows * (sp.pos + sp.rows) * hd;
    const size_t chunks = (group + kAttendHeads - 1) / kAttendHeads, head_tasks = c.n_head_kv * chunks;
    const bool f32 = s.kv_types_.k == KvType::f32 && s.kv_types_.v == KvType::f32;
    const size_t partial = attend_partial_size(hd), per_thread = s.chunk_.size() / static_cast<size_t>(pool.threads());

    // Grouped-query attention, one task per (up to kAttendHeads query heads of one K/V head,
    // piece of a span): row i (position p) attends to its sequence's cache positions 0..p (on a
    // local layer p-n_swa+1..p, which may wrap around the ring); the result goes to xb, [m, q_dim].
    // `first`: the first position a row attends; a window that starts after position 0 starts
    // at a different position for every row.
    auto heads_of = [&](size_t ht) {  // head task ht's K/V head and first query head
      const size_t g = ht / chunks;
      return std::pair{g, g * group + ht % chunks * kAttendHeads};
    };
    auto task_of = [&](size_t t) {
      const auto [g, h] = heads_of(t % head_tasks);
      size_t piece = t / head_tasks, si = 0;  // the span and the piece's first row
      for (size_t p; piece >= (p = pieces(s.spans_[si])); ++si) piece -= p;
      return std::tuple{g, h, si, piece * rows_per_task};
    };
    auto head_of = [&](size_t seq, size_t g, size_t first) {
      const size_t row = seq * seq_kv + layer_kv + g * slots;
      return KvHead{s.kv_types_.k, s.kv_types_.v, s.key_cache_.data() + row * s.k_row_, s.value_cache_.data() + row * s.v_row_,
                    s.k_row_, s.v_row_, KvRing{first % slots, slots}};
    };
    auto first_of = [&](size_t pos) { return local && pos + 1 > c.n_swa ? pos + 1 - c.n_swa : 0; };
    auto attend = [&](size_t t, int tid) {
      const auto [g, h, si, r0] = task_of(t);
      const State::Span& sp = s.spans_[si];
      const size_t i0 = sp.row + r0, heads = std::min(kAttendHeads, (g + 1) * group - h), rows_here = std::min(rows_per_task, sp.rows - r0);
      const bool windowed = local && sp.pos + r0 + rows_here > c.n_swa;
      const size_t tid_z = static_cast<size_t>(tid);
      for (size_t r = 0; r < (windowed ? rows_here : 1); ++r) {
        const size_t i = i0 + r, first = windowed ? first_of(sp.pos + r0 + r) : 0, n_rows = windowed ? 1 : rows_here;
        const size_t pos0 = sp.pos + r0 + r - first;  // the row's position counted from `first`
        const KvHead kvh = head_of(sp.seq, g, first);
        if (f32) {
          attend_heads(qkv + i * qkv_dim + h * hd, qkv_dim, heads, reinterpret_cast<const float*>(kvh.k),
                       reinterpret_cast<const float*>(kvh.v), hd, hd, pos0, n_rows, c.attn_scale,
                       s.att_.data() + tid_z * kAttendHeads * s.n_ctx_, xb + i * q_dim + h * hd, q_dim, c.attn_softcap, kvh.ring);
          continue;
        }
        float* scratch = s.chunk_.data() + tid_z * (per_thread);
        float *part = scratch + attend_chunk_scratch(hd), *acc = part + kAttendTaskRows * kAttendHeads * partial;
        std::fill(acc, acc + n_rows * heads * partial, 0.0f);
        for (size_t ch = 0; ch * kAttendChunk < pos0 + n_rows; ++ch) {
          attend_chunk(qkv + i * qkv_dim + h * hd, qkv_dim, heads, kvh, hd, ch, pos0, n_rows, c.attn_scale, c.attn_softcap, scratch, part);
          attend_combine(acc, part, n_rows * heads, hd);
        }
        attend_finish(acc, n_rows, heads, hd, xb + i * q_dim + h * hd, q_dim);
      }
    };
    // Split-KV: a span that is one decode row (one token of a sequence: a decode step has one
    // per sequence) splits its attended positions into its chunks. Task (head task, chunk of the
    // step) writes the chunk's partials to split_, then one task per (span, head task) folds its
    // chunks' partials in order: the arithmetic of one task folding them (attend_chunk's
    // contract), so a row's bits depend neither on the split nor on the thread count nor on the
    // other rows of the batch. Tiny work is not split; neither is a span past split_'s room.
    const bool tiny = work < (size_t{1} << 13);
    const size_t room = f32 || tiny ? 0 : s.split_.size() / (c.n_head * partial);
    size_t split_total = 0, row_tasks = 0;
    s.split_spans_.clear();
    for (size_t si = 0; si < s.spans_.size(); ++si) {
      State::Span& sp = s.spans_[si];
      const size_t n = sp.rows == 1 ? (sp.pos - first_of(sp.pos) + kAttendChunk) / kAttendChunk : 0;
      sp.chunk0 = split_total;
      sp.chunks = n > 1 && split_total + n <= room ? n : 0;
      if (sp.chunks) s.split_spans_.push_back(si);
      split_total += sp.chunks;
      row_tasks += pieces(sp);
    }
    auto attend_split = [&](size_t ch, size_t ht, int tid) {  // ch: the step's chunk
      const auto it = std::upper_bound(s.split_spans_.begin(), s.split_spans_.end(), ch,
                                       [&](size_t c0, size_t si) { return c0 < s.spans_[si].chunk0; });
      const State::Span& sp = s.spans_[*(it - 1)];
      const auto [g, h] = heads_of(ht);
      const size_t heads = std::min(kAttendHeads, (g + 1) * group - h), first = first_of(sp.pos);
      float* scratch = s.chunk_.data() + static_cast<size_t>(tid) * (per_thread);
      attend_chunk(qkv + sp.row * qkv_dim + h * hd, qkv_dim, heads, head_of(sp.seq, g, first), hd, ch - sp.chunk0, sp.pos - first, 1,
                   c.attn_scale, c.attn_softcap, scratch, s.split_.data() + (ch * c.n_head + h) * partial);
    };
    auto merge_split = [&](size_t t, int tid) {
      const State::Span& sp = s.spans_[s.split_spans_[t / head_tasks]];
      const auto [g, h] = heads_of(t % head_tasks);
      const size_t heads = std::min(kAttendHeads, (g + 1) * group - h);
      float* acc = s.chunk_.data() + static_cast<size_t>(tid) * (per_thread) + attend_chunk_scratch(hd);
      std::fill(acc, acc + heads * partial, 0.0f);
      for (size_t ch = sp.chunk0; ch < sp.chunk0 + sp.chunks; ++ch) attend_combine(acc, s.split_.data() + (ch * c.n_head + h) * partial, heads, hd);
      attend_finish(acc, 1, heads, hd, xb + sp.row * q_dim + h * hd, q_dim);
    };
    // Tiny work (the first positions, tiny models) is not worth waking the pool for; a decode
    // step's attention is worth it early, since the cache it reads comes from DRAM. The whole
    // spans' tasks (the larger ones) come first, then the chunks.
    const size_t whole = head_tasks * row_tasks;
    if (tiny) {
      for (size_t t = 0; t < whole; ++t) attend(t, 0);
    } else {
      pool.parallel_for(whole + head_tasks * split_total, [&](size_t t, int tid) {
        if (t < whole) {
          attend(t, tid);
        } else {
          attend_split((t - whole) / head_tasks, (t - whole) % head_tasks, tid);
        }
      });
      pool.parallel_for(head_tasks * s.split_spans_.size(), merge_split);
    }
  }

  // SwiGLU / GeGLU FFN of the rows, in place: hb[i] = [gate | up] = xb · [Wgate; Wup]ᵀ, gate =
  // act(gate) ⊙ up, xb = gate · Wdownᵀ. `next`: the weights multiplied after it.
  void dense_ffn(const Layer& L, float* xb, const PackedWeights* next) {
    float* hb = s.hb_.data();
    const size_t ff = c.n_ff;
    linear(L.gate_up, m, xb, dim, hb, 2 * ff, ctx, &L.w_down);
    apply_rows(pool, L.gate_up_out, hb, m, 2 * ff, 2 * ff);
    parallel_range(pool, m * ff, 4096, [&](size_t b, size_t e) {
      for (size_t i = b; i < e;) {  // [b, e) over the gate halves of the rows
        const size_t row = i / ff, col = i % ff, len = std::min(e - i, ff - col);
        float* gate = hb + row * 2 * ff + col;
        (c.spec->act == Activation::geglu ? geglu : swiglu)(gate, gate + ff, len);
        i += len;
      }
    });

    // Down projection: xb = gate · Wdownᵀ
    linear(L.w_down, m, hb, 2 * ff, xb, dim, ctx, next);
    apply_rows(pool, L.down_out, xb, m, dim, dim);
  }

  // The weights the pass multiplies after layer l's.
  const PackedWeights* after(size_t l) const { return l + 1 < c.n_layer ? &model.layers()[l + 1].qkv.parts[0] : &model.output(); }

  // Final RMSNorm and output projection, for the rows that asked for logits: logits_ = [n_out, n_vocab].
  void logits(const float* x, float* xb, size_t n_out) {
    for (size_t i = 0, j = 0; i < m; ++i) {
      if (rows[i].logits) rmsnorm(xb + j++ * dim, x + i * dim, model.output_norm().data(), dim, c.norm_eps);
    }
    if (n_out > 0) linear(model.output(), n_out, xb, dim, s.logits_.data(), c.n_vocab, ctx, nullptr);
    apply_rows(pool, model.output_out(), s.logits_.data(), n_out, c.n_vocab, c.n_vocab);
    if (c.final_softcap > 0) {  // Gemma 2
      parallel_range(pool, n_out * c.n_vocab, 1 << 15, [&](size_t b, size_t e) { softcap_logits(s.logits_.data() + b, e - b, c.final_softcap); });
    }
  }

  // The rings now hold the last ring_ positions of each sequence (all of them from position 0
  // when the sequence started over); the sequences' positions move past the batch.
  void commit() {
    for (const State::Span& sp : s.spans_) {
      if (sp.pos == 0) s.held_[sp.seq] = 0;
    }
    for (size_t q = 0; q < s.pos_.size(); ++q) s.held_[q] = std::max(s.held_[q], s.next_pos_[q] - std::min(s.next_pos_[q], s.ring_));
    std::copy(s.next_pos_.begin(), s.next_pos_.end(), s.pos_.begin());
  }
};

const float* forward(const Model& model, State& s, const int32_t* tokens, const BatchRow* rows, size_t n) {
  ForwardPass p{model, s, rows, n};
  const size_t n_out = p.plan(tokens);
  const Config& c = model.config();
  Context& ctx = *s.ctx_;
  ThreadPool& pool = ctx.pool();
  const size_t m = n, dim = c.n_embd, q_dim = c.q_dim(), qkv_dim = q_dim + 2 * c.kv_dim();
  float *x = s.x_.data(), *xb = s.xb_.data(), *xb2 = s.xb2_.data(), *qkv = s.qkv_.data();

  p.embed(tokens, x);
  p.rope_angles();
  for (size_t l = 0; l < c.n_layer; ++l) {
    const Layer& L = model.layers()[l];

    // Attention RMSNorm: xb = rmsnorm(x) · attn_norm
    norm_rows(pool, xb, x, L.attn_norm.data(), m, dim, c.norm_eps);

    // Q, K, V projections (one matmul when fused): qkv[i] = [q | k | v] of row i; then biases,
    // q/k norms and RoPE, and the keys and values into the cache
    linear(L.qkv, m, xb, dim, qkv, qkv_dim, ctx, &L.wo);
    p.qkv_rows(L, l);

    // Grouped-query attention: xb[i] = softmax(q_i · Kᵀ) · V over row i's positions
    p.attention(l, xb);

    // Output projection (then its RMSNorm for Gemma) and residual: x += xb · Woᵀ
    linear(L.wo, m, xb, q_dim, xb2, dim, ctx, c.n_expert ? &L.moe.router : &L.gate_up.parts[0]);
    apply_rows(pool, L.wo_out, xb2, m, dim, dim);
    if (!L.post_attn_norm.empty()) norm_rows(pool, xb2, xb2, L.post_attn_norm.data(), m, dim, c.norm_eps);
    parallel_range(pool, m * dim, 4096, [&](size_t b, size_t e) { add(x + b, xb2 + b, e - b); });

    // FFN RMSNorm: xb = rmsnorm(x) · ffn_norm
    norm_rows(pool, xb, x, L.ffn_norm.data(), m, dim, c.norm_eps);

    // FFN: xb = the router's chosen experts of each row, weighted (moe.h), or SwiGLU / GeGLU
    if (c.n_expert) {
      moe_ffn(c, L.moe, l, m, xb, xb, s.moe_, ctx, p.after(l));
    } else {
      p.dense_ffn(L, xb, p.after(l));
    }

    // (Its RMSNorm for Gemma and) residual: x += xb
    if (!L.post_ffn_norm.empty()) norm_rows(pool, xb, xb, L.post_ffn_norm.data(), m, dim, c.norm_eps);
    parallel_range(pool, m * dim, 4096, [&](size_t b, size_t e) { add(x + b, xb + b, e - b); });
  }

  p.logits(x, xb, n_out);
  p.commit();
  return s.logits_.data();
}

}  // namespace qmm::llm
