// The Llama forward pass over a batch of tokens (prefill: the whole prompt; decode: one
// token), readable top to bottom like llama2.c's forward(). Matmuls go through src/matmul
// (GEMM kernels when m > 1, GEMV when m == 1); everything else is plain loops split over the
// context's thread pool by rows or heads.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "llm/model.h"

namespace qmm::llm {
namespace {

// Σ a[i]·b[i] in eight independent partial sums, so the compiler can vectorize it.
inline float dot(const float* a, const float* b, size_t n) {
  float acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// out = x / sqrt(mean(x²) + eps) · gain
inline void rmsnorm(float* out, const float* x, const float* gain, size_t n, float eps) {
  const float inv = 1.0f / std::sqrt(dot(x, x, n) / static_cast<float>(n) + eps);
  for (size_t i = 0; i < n; ++i) out[i] = x[i] * inv * gain[i];
}

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
  q_.resize(b * c.n_embd);
  hb_.resize(b * c.n_ff);
  hb2_.resize(b * c.n_ff);
  att_.resize(static_cast<size_t>(ctx.threads()) * n_ctx);
  rope_.resize(b * c.n_rot);
  logits_.resize(c.n_vocab);
  const size_t kv = checked_mul(checked_mul(c.n_layer, n_ctx, "KV cache"), c.kv_dim(), "KV cache");
  key_cache_.resize(kv);
  value_cache_.resize(kv);
}

size_t State::bytes() const {
  size_t floats = 0;
  for (const auto* v : {&x_, &xb_, &xb2_, &q_, &hb_, &hb2_, &att_, &rope_, &logits_, &key_cache_, &value_cache_}) floats += v->size();
  return floats * sizeof(float);
}

const float* forward(const Model& model, State& s, const int32_t* tokens, size_t n) {
  const Config& c = model.config();
  check_arg(n >= 1 && n <= s.n_batch_, "a batch holds 1.." + std::to_string(s.n_batch_) + " tokens, got " + std::to_string(n));
  check_arg(s.pos_ + n <= s.n_ctx_, "the context is full (" + std::to_string(s.n_ctx_) + " tokens)");
  Context& ctx = *s.ctx_;
  ThreadPool& pool = ctx.pool();
  const size_t m = n, pos = s.pos_, dim = c.n_embd, kv_dim = c.kv_dim(), hd = c.head_dim, ff = c.n_ff;
  const size_t group = c.n_head / c.n_head_kv;  // query heads per K/V head
  const float att_scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float *x = s.x_.data(), *xb = s.xb_.data(), *xb2 = s.xb2_.data(), *q = s.q_.data();
  float *hb = s.hb_.data(), *hb2 = s.hb2_.data();

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

    // Q, K, V projections; K and V are written straight into the cache rows pos..pos+m-1.
    linear(L.wq, m, xb, dim, q, dim, ctx);
    linear(L.wk, m, xb, dim, k_cache + pos * kv_dim, kv_dim, ctx);
    linear(L.wv, m, xb, dim, v_cache + pos * kv_dim, kv_dim, ctx);

    // RoPE on the queries and the new keys.
    parallel_range(pool, m, 4, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        rope(q + i * dim, c.n_head, hd, c.n_rot, s.rope_.data() + i * c.n_rot);
        rope(k_cache + (pos + i) * kv_dim, c.n_head_kv, hd, c.n_rot, s.rope_.data() + i * c.n_rot);
      }
    });

    // Grouped-query attention, one task per (head, group of query rows): row i (position
    // pos + i) attends to cache positions 0..pos+i; the result goes to xb.
    const size_t rows_per_task = std::max<size_t>(1, std::min<size_t>(16, m / 4));
    const size_t row_tasks = (m + rows_per_task - 1) / rows_per_task;
    auto attend = [&](size_t t, int tid) {
      const size_t h = t % c.n_head, i0 = t / c.n_head * rows_per_task;
      const float* kh = k_cache + h / group * hd;
      const float* vh = v_cache + h / group * hd;
      float* att = s.att_.data() + static_cast<size_t>(tid) * s.n_ctx_;
      for (size_t i = i0; i < std::min(m, i0 + rows_per_task); ++i) {
        const float* qh = q + i * dim + h * hd;
        const size_t len = pos + i + 1;
        // Scores: att[t] = q · k[t] / sqrt(head_dim)
        float mx = -INFINITY;
        for (size_t p = 0; p < len; ++p) {
          att[p] = dot(qh, kh + p * kv_dim, hd) * att_scale;
          mx = std::max(mx, att[p]);
        }
        // Softmax
        float sum = 0.0f;
        for (size_t p = 0; p < len; ++p) {
          att[p] = std::exp(att[p] - mx);
          sum += att[p];
        }
        // Weighted sum of the values
        float* out = xb + i * dim + h * hd;
        std::fill(out, out + hd, 0.0f);
        const float inv = 1.0f / sum;
        for (size_t p = 0; p < len; ++p) {
          const float a = att[p] * inv;
          const float* v = vh + p * kv_dim;
          for (size_t d = 0; d < hd; ++d) out[d] += a * v[d];
        }
      }
    };
    // Small work (short contexts, tiny models) is not worth waking the pool for.
    const size_t work = c.n_head * m * (pos + m) * hd;
    if (work < (size_t{1} << 16)) {
      for (size_t t = 0; t < c.n_head * row_tasks; ++t) attend(t, 0);
    } else {
      pool.parallel_for(c.n_head * row_tasks, attend);
    }

    // Output projection and residual: x += xb · Woᵀ
    linear(L.wo, m, xb, dim, xb2, dim, ctx);
    parallel_range(pool, m * dim, 4096, [&](size_t b, size_t e) { add(x + b, xb2 + b, e - b); });

    // FFN RMSNorm: xb = rmsnorm(x) · ffn_norm
    parallel_range(pool, m, 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) rmsnorm(xb + i * dim, x + i * dim, L.ffn_norm.data(), dim, c.norm_eps);
    });

    // SwiGLU: hb = silu(xb · Wgateᵀ) ⊙ (xb · Wupᵀ)
    linear(L.w_gate, m, xb, dim, hb, ff, ctx);
    linear(L.w_up, m, xb, dim, hb2, ff, ctx);
    parallel_range(pool, m * ff, 2048, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) hb[i] = hb[i] / (1.0f + std::exp(-hb[i])) * hb2[i];
    });

    // Down projection and residual: x += hb · Wdownᵀ
    linear(L.w_down, m, hb, ff, xb, dim, ctx);
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
