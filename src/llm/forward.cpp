// The Llama forward pass over a batch of tokens (prefill: the whole prompt; decode: one
// token), readable top to bottom like llama2.c's forward(). Matmuls go through src/matmul
// (GEMM kernels when m > 1, GEMV when m == 1); everything else is plain loops split over the
// context's thread pool by rows or heads.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "llm/model.h"
#include "llm/ops.h"

namespace qmm::llm {
namespace {

// Rotates the first n_rot dimensions of each head of a row in consecutive pairs (2i, 2i+1):
// llama.cpp's "normal" RoPE, which GGUF's permuted Q/K weights of the llama arch expect.
inline void rope(float* v, size_t n_heads, size_t head_dim, size_t n_rot, const float* cs) {
  for (size_t h = 0; h < n_heads; ++h) {
    float* x = v + h * head_dim;
    for (size_t i = 0; i < n_rot / 2; ++i) {
      const float c = cs[2 * i], s = cs[2 * i + 1];
      const float x0 = x[2 * i], x1 = x[2 * i + 1];
      x[2 * i] = x0 * c - x1 * s;
      x[2 * i + 1] = x0 * s + x1 * c;
    }
  }
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

// dst[m, w.n()] = src[m, w.k()] · Wᵀ (row strides in floats).
inline void linear(const PackedWeights& w, size_t m, const float* src, size_t src_stride, float* dst, size_t dst_stride,
                   Context& ctx) {
  matmul(w, m, src, src_stride * sizeof(float), dst, dst_stride * sizeof(float), -INFINITY, INFINITY, ctx);
}

// The same for weights side by side: each part writes its columns of dst.
inline void linear(const Fused& w, size_t m, const float* src, size_t src_stride, float* dst, size_t dst_stride,
                   Context& ctx) {
  size_t col = 0;
  for (const PackedWeights& part : w.parts) {
    linear(part, m, src, src_stride, dst + col, dst_stride, ctx);
    col += part.n();
  }
}

}  // namespace

State::State(const Model& model, size_t n_ctx, size_t n_batch, Context& ctx)
    : n_ctx_(n_ctx), n_batch_(std::min(n_batch, n_ctx)), ctx_(&ctx) {
  const Config& c = model.config();
  check_arg(n_ctx >= 1 && n_batch >= 1, "context and batch sizes must be at least 1");
  check_arg(n_ctx <= (size_t{1} << 24), "context size " + std::to_string(n_ctx) + " is too large");
  const size_t b = n_batch_;
  x_.resize(b * c.n_embd);
  xb_.resize(b * c.n_embd);
  xb2_.resize(b * c.n_embd);
  qkv_.resize(b * (c.n_embd + 2 * c.kv_dim()));
  hb_.resize(b * 2 * c.n_ff);
  att_.resize(static_cast<size_t>(ctx.threads()) * kAttendHeads * n_ctx);
  rope_.resize(b * c.n_rot);
  logits_.resize(c.n_vocab);
  const size_t kv = checked_mul(checked_mul(c.n_layer, n_ctx, "KV cache"), c.kv_dim(), "KV cache");
  key_cache_.resize(kv);
  value_cache_.resize(kv);
}

size_t State::bytes() const {
  size_t floats = 0;
  for (const auto* v : {&x_, &xb_, &xb2_, &qkv_, &hb_, &att_, &rope_, &logits_, &key_cache_, &value_cache_}) floats += v->size();
  return floats * sizeof(float);
}

const float* forward(const Model& model, State& s, const int32_t* tokens, size_t n) {
  const Config& c = model.config();
  if (n < 1 || n > s.n_batch_) {  // (messages built only on failure: no allocation per token)
    fail(Status::invalid_argument, "a batch holds 1.." + std::to_string(s.n_batch_) + " tokens, got " + std::to_string(n));
  }
  if (s.pos_ + n > s.n_ctx_) fail(Status::invalid_argument, "the context is full (" + std::to_string(s.n_ctx_) + " tokens)");
  Context& ctx = *s.ctx_;
  ThreadPool& pool = ctx.pool();
  const size_t m = n, pos = s.pos_, dim = c.n_embd, kv_dim = c.kv_dim(), hd = c.head_dim, ff = c.n_ff;
  const size_t group = c.n_head / c.n_head_kv;  // query heads per K/V head
  const float att_scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const size_t qkv_dim = dim + 2 * kv_dim;
  float *x = s.x_.data(), *xb = s.xb_.data(), *xb2 = s.xb2_.data(), *qkv = s.qkv_.data(), *hb = s.hb_.data();

  // Token embeddings: x[i] = token_embd[tokens[i]]
  for (size_t i = 0; i < m; ++i) model.embed(tokens[i], x + i * dim);

  // RoPE angles of the batch's positions, shared by every layer: (cos, sin) per rotated pair.
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < c.n_rot / 2; ++j) {
      const float theta = static_cast<float>(pos + i) * model.rope_freqs()[j];
      s.rope_[i * c.n_rot + 2 * j] = std::cos(theta);
      s.rope_[i * c.n_rot + 2 * j + 1] = std::sin(theta);
    }
  }

  for (size_t l = 0; l < c.n_layer; ++l) {
    const Layer& L = model.layers()[l];
    float* k_cache = s.key_cache_.data() + l * s.n_ctx_ * kv_dim;    // [n_ctx, kv_dim]
    float* v_cache = s.value_cache_.data() + l * s.n_ctx_ * kv_dim;

    // Attention RMSNorm: xb = rmsnorm(x) · attn_norm
    parallel_range(pool, m, 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) rmsnorm(xb + i * dim, x + i * dim, L.attn_norm.data(), dim, c.norm_eps);
    });

    // Q, K, V projections (one matmul when fused): qkv[i] = [q | k | v] of row i
    linear(L.qkv, m, xb, dim, qkv, qkv_dim, ctx);

    // RoPE on the queries and keys; keys and values go to the cache rows pos..pos+m-1.
    parallel_range(pool, m, 4, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        float* row = qkv + i * qkv_dim;
        float* k_row = k_cache + (pos + i) * kv_dim;
        std::copy(row + dim, row + dim + kv_dim, k_row);
        std::copy(row + dim + kv_dim, row + qkv_dim, v_cache + (pos + i) * kv_dim);
        rope(row, c.n_head, hd, c.n_rot, s.rope_.data() + i * c.n_rot);
        rope(k_row, c.n_head_kv, hd, c.n_rot, s.rope_.data() + i * c.n_rot);
      }
    });

    // Grouped-query attention, one task per (up to kAttendHeads query heads of one K/V head,
    // group of query rows): row i (position pos + i) attends to cache positions 0..pos+i; the result
    // goes to xb.
    const size_t rows_per_task = std::max<size_t>(1, std::min<size_t>(16, m / 4));
    const size_t row_tasks = (m + rows_per_task - 1) / rows_per_task;
    const size_t chunks = (group + kAttendHeads - 1) / kAttendHeads, head_tasks = c.n_head_kv * chunks;
    auto attend = [&](size_t t, int tid) {
      const size_t g = t % head_tasks / chunks, h = g * group + t % chunks * kAttendHeads, i0 = t / head_tasks * rows_per_task;
      attend_heads(qkv + i0 * qkv_dim + h * hd, qkv_dim, std::min(kAttendHeads, (g + 1) * group - h), k_cache + g * hd,
                   v_cache + g * hd, kv_dim, hd, pos + i0, std::min(rows_per_task, m - i0), att_scale,
                   s.att_.data() + static_cast<size_t>(tid) * kAttendHeads * s.n_ctx_, xb + i0 * dim + h * hd, dim);
    };
    // Small work (short contexts, tiny models) is not worth waking the pool for.
    const size_t work = c.n_head * m * (pos + m) * hd;
    if (work < (size_t{1} << 20)) {
      for (size_t t = 0; t < head_tasks * row_tasks; ++t) attend(t, 0);
    } else {
      pool.parallel_for(head_tasks * row_tasks, attend);
    }

    // Output projection and residual: x += xb · Woᵀ
    linear(L.wo, m, xb, dim, xb2, dim, ctx);
    parallel_range(pool, m * dim, 4096, [&](size_t b, size_t e) { add(x + b, xb2 + b, e - b); });

    // FFN RMSNorm: xb = rmsnorm(x) · ffn_norm
    parallel_range(pool, m, 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) rmsnorm(xb + i * dim, x + i * dim, L.ffn_norm.data(), dim, c.norm_eps);
    });

    // SwiGLU: hb[i] = [gate | up] = xb · [Wgate; Wup]ᵀ, then gate = silu(gate) ⊙ up
    linear(L.gate_up, m, xb, dim, hb, 2 * ff, ctx);
    parallel_range(pool, m * ff, 4096, [&](size_t b, size_t e) {
      for (size_t i = b; i < e;) {  // [b, e) over the gate halves of the rows
        const size_t row = i / ff, col = i % ff, len = std::min(e - i, ff - col);
        float* gate = hb + row * 2 * ff + col;
        swiglu(gate, gate + ff, len);
        i += len;
      }
    });

    // Down projection and residual: x += gate · Wdownᵀ
    linear(L.w_down, m, hb, 2 * ff, xb, dim, ctx);
    parallel_range(pool, m * dim, 4096, [&](size_t b, size_t e) { add(x + b, xb + b, e - b); });
  }

  // Final RMSNorm and output projection, for the last token only.
  const float* last = x + (m - 1) * dim;
  rmsnorm(xb, last, model.output_norm().data(), dim, c.norm_eps);
  linear(model.output(), 1, xb, dim, s.logits_.data(), c.n_vocab, ctx);

  s.pos_ += m;
  return s.logits_.data();
}

}  // namespace qmm::llm
