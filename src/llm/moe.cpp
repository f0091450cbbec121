// The Mixture-of-Experts feed-forward block (moe.h).
#include "llm/moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "gguf/dequant.h"
#include "gguf/gguf.h"
#include "llm/model.h"
#include "llm/ops.h"

namespace qmm::llm {
namespace {

constexpr size_t kMaxExperts = 1024;  // llama.cpp's LLAMA_MAX_EXPERTS

// f(begin, end) over [0, count) in at most 4 tasks per thread of at least `grain` items.
template <class F>
void split(ThreadPool& pool, size_t count, size_t grain, F&& f) {
  const size_t tasks = std::max<size_t>(1, std::min(count / std::max<size_t>(grain, 1), static_cast<size_t>(pool.threads()) * 4));
  const size_t per = (count + tasks - 1) / tasks;
  if (tasks == 1) return f(size_t{0}, count);
  pool.parallel_for(tasks, [&](size_t t, int) {
    const size_t b = t * per, e = std::min(count, b + per);
    if (b < e) f(b, e);
  });
}

void linear(const PackedWeights& w, size_t m, const float* src, size_t src_stride, float* dst, size_t dst_stride, Context& ctx,
            const PackedWeights* next) {
  matmul(w, m, src, src_stride * sizeof(float), dst, dst_stride * sizeof(float), -INFINITY, INFINITY, ctx, next);
}

void linear(const Fused& w, size_t m, const float* src, size_t src_stride, float* dst, size_t dst_stride, Context& ctx,
            const PackedWeights* next) {
  size_t col = 0;
  for (size_t i = 0; i < w.parts.size(); ++i) {
    linear(w.parts[i], m, src, src_stride, dst + col, dst_stride, ctx, i + 1 < w.parts.size() ? &w.parts[i + 1] : next);
    col += w.parts[i].n();
  }
}

// Rows [b, e) of [gate | up] rows of width 2·ff: gate = silu(gate) ⊙ up.
void swiglu_rows(float* h, size_t b, size_t e, size_t ff) {
  for (size_t r = b; r < e; ++r) swiglu(h + r * 2 * ff, h + r * 2 * ff + ff, ff);
}

// Row i's experts and weights from its router logits (turned into probabilities in place).
void route(float* p, size_t n_expert, size_t k, bool norm, uint32_t* chosen, float* weight) {
  const float mx = *std::max_element(p, p + n_expert);
  double sum = 0;  // (ggml's soft_max: float exponentials, a double sum, then one float scale)
  for (size_t e = 0; e < n_expert; ++e) sum += p[e] = std::exp(p[e] - mx);
  const auto inv = static_cast<float>(1.0 / sum);
  for (size_t e = 0; e < n_expert; ++e) p[e] *= inv;
  // The k best, best first; on equal probabilities the lower index first.
  auto better = [&](uint32_t a, uint32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); };
  std::iota(chosen, chosen + k, 0u);
  std::sort(chosen, chosen + k, better);
  for (auto e = static_cast<uint32_t>(k); e < n_expert; ++e) {  // (a later index wins only when strictly better)
    if (!(p[e] > p[chosen[k - 1]])) continue;
    size_t s = k - 1;
    for (; s > 0 && p[e] > p[chosen[s - 1]]; --s) chosen[s] = chosen[s - 1];
    chosen[s] = e;
  }
  double total = 0;
  for (size_t s = 0; s < k; ++s) total += weight[s] = p[chosen[s]];
  if (!norm) return;
  const float d = std::max(static_cast<float>(total), 6.103515625e-5f);  // llama.cpp's clamp: F16's smallest normal
  for (size_t s = 0; s < k; ++s) weight[s] /= d;
}

}  // namespace

void read_moe_config(const gguf::File& f, Config& c) {
  const ArchSpec& spec = *c.spec;
  const std::string a = c.arch + ".";
  if (!spec.moe) {
    if (const uint64_t n = f.find_u64(a + "expert_count").value_or(0); n > 0) {
      fail(Status::unsupported, f.path() + ": " + a + "expert_count = " + std::to_string(n) + ": mixture-of-experts " + c.arch +
                                    " models are not supported (qwen2moe, qwen3moe and olmoe are)");
    }
    return;
  }
  auto bad = [&](const std::string& what) { fail(Status::io, f.path() + ": " + what); };
  auto count = [&](const std::string& key) {
    if (!f.has(a + key)) bad(a + key + " missing (" + c.arch + " is a mixture-of-experts architecture)");
    const uint64_t v = f.get_u64(a + key);  // (a per-layer array is a type error naming the key)
    if (v == 0 || v > kMaxExperts) bad(a + key + " = " + std::to_string(v) + " is out of range (1.." + std::to_string(kMaxExperts) + ")");
    return static_cast<size_t>(v);
  };
  c.n_expert = count("expert_count");
  c.n_expert_used = count("expert_used_count");
  if (c.n_expert_used > c.n_expert) {
    bad(a + "expert_used_count = " + std::to_string(c.n_expert_used) + " exceeds " + a + "expert_count = " + std::to_string(c.n_expert));
  }
  auto width = [&](const std::string& key, size_t otherwise, const std::string& fallback) {
    if (f.has(a + key)) {
      const uint64_t v = f.get_u64(a + key);
      if (v == 0 || v >= (uint64_t{1} << 31)) bad(a + key + " = " + std::to_string(v) + " is out of range");
      return static_cast<size_t>(v);
    }
    if (otherwise == 0) bad(a + key + " missing (and " + fallback + " gives 0)");
    return otherwise;
  };
  if (spec.expert_ff_is_ff) {  // (llama.cpp: the experts are feed_forward_length wide)
    if (c.n_ff == 0) bad(a + "feed_forward_length missing (the experts' width)");
    if (f.has(a + "expert_feed_forward_length") && f.get_u64(a + "expert_feed_forward_length") != c.n_ff) {
      fail(Status::unsupported, f.path() + ": " + a + "expert_feed_forward_length differs from " + a +
                                    "feed_forward_length, but llama.cpp's " + c.arch + " experts are feed_forward_length wide");
    }
    c.n_ff_exp = c.n_ff;
  } else {
    c.n_ff_exp = width("expert_feed_forward_length", c.n_ff / c.n_expert_used, "feed_forward_length / expert_used_count");
  }
  if (spec.shared_expert) c.n_ff_shexp = width("expert_shared_feed_forward_length", c.n_ff, "feed_forward_length");
  // Keys llama.cpp does not read for these families: a value other than what the family does
  // would be silently ignored there, so it is refused here.
  auto refuse = [&](const std::string& key, const std::string& value, const std::string& does) {
    fail(Status::unsupported, f.path() + ": " + a + key + " = " + value + ", but " + c.arch + " " + does +
                                  " (llama.cpp ignores the key; qmm will not run another model than the file describes)");
  };
  if (f.has(a + "expert_weights_norm") && f.get_bool(a + "expert_weights_norm") != spec.moe_norm) {
    refuse("expert_weights_norm", spec.moe_norm ? "false" : "true",
           spec.moe_norm ? "always renormalises the experts' weights" : "never renormalises the experts' weights");
  }
  if (const std::optional<double> s = f.find_f64(a + "expert_weights_scale"); s && *s != 0 && *s != 1) {
    refuse("expert_weights_scale", std::to_string(*s), "does not scale the experts' weights");
  }
  if (const std::optional<uint64_t> g = f.find_u64(a + "expert_gating_func"); g && *g != 1) {
    refuse("expert_gating_func", std::to_string(*g), "gates by softmax (1)");
  }
}

std::string moe_summary(const Config& c) {
  if (!c.spec->moe) return "";
  return ", " + std::to_string(c.n_expert) + " experts of width " + std::to_string(c.n_ff_exp) + ", " + std::to_string(c.n_expert_used) +
         " per token" + (c.spec->moe_norm ? " (weights renormalised)" : "") +
         (c.spec->shared_expert ? ", a gated shared expert of width " + std::to_string(c.n_ff_shexp) : "");
}

gguf::TensorInfo expert_slice(const gguf::TensorInfo& t, size_t e) {
  check_arg(t.shape.size() == 3 && e < t.shape[2], "expert_slice: not a 3-D tensor or no such expert");
  gguf::TensorInfo s;
  s.name = t.name + "[" + std::to_string(e) + "]";
  s.type = t.type;
  s.shape = {t.shape[0], t.shape[1]};
  s.bytes = gguf::ggml_row_bytes(t.type, t.shape[0]) * t.shape[1];
  s.data = t.data + e * s.bytes;
  s.offset = t.offset + e * s.bytes;
  return s;
}

void MoeScratch::size_for(const Config& c, size_t n_batch) {
  if (c.n_expert == 0) return;
  const size_t k = c.n_expert_used, rows = checked_mul(n_batch, k, "expert rows");
  probs.resize(checked_mul(n_batch, c.n_expert, "router"));
  chosen.resize(rows);
  weight.resize(rows);
  grouped.resize(rows);
  row_of.resize(rows);
  parts.reserve(2 * rows);
  first.resize(c.n_expert + 1);
  in.resize(checked_mul(rows, c.n_embd, "expert inputs"));
  hidden.resize(checked_mul(rows, 2 * c.n_ff_exp, "expert activations"));
  out.resize(checked_mul(rows, c.n_embd, "expert outputs"));
  if (c.n_ff_shexp) shared.resize(checked_mul(n_batch, 2 * c.n_ff_shexp + c.n_embd, "shared expert"));
  last.assign(c.n_layer * k, 0);
}

size_t MoeScratch::bytes() const {
  return (probs.size() + weight.size() + in.size() + hidden.size() + out.size() + shared.size()) * sizeof(float) +
         (chosen.size() + first.size() + grouped.size() + row_of.size() + last.size()) * sizeof(uint32_t) +
         parts.capacity() * sizeof(MatmulPart);
}

void moe_ffn(const Config& c, const Experts& E, size_t layer, size_t m, const float* x, float* out, MoeScratch& s, Context& ctx,
             const PackedWeights* next) {
  ThreadPool& pool = ctx.pool();
  const size_t dim = c.n_embd, k = c.n_expert_used, ne = c.n_expert, ff = c.n_ff_exp;

  // Router: probabilities of every expert, then each row's k best and their weights.
  linear(E.router, m, x, dim, s.probs.data(), ne, ctx, nullptr);
  split(pool, m, 16, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) route(s.probs.data() + i * ne, ne, k, c.spec->moe_norm, s.chosen.data() + i * k, s.weight.data() + i * k);
  });
  std::copy(s.chosen.begin(), s.chosen.begin() + static_cast<std::ptrdiff_t>(k), s.last.begin() + static_cast<std::ptrdiff_t>(layer * k));

  // Group the (row, slot) pairs by expert: expert e's inputs are grouped rows first[e].. in row order.
  std::fill(s.first.begin(), s.first.end(), 0u);
  for (size_t r = 0; r < m * k; ++r) ++s.first[s.chosen[r] + 1];
  std::partial_sum(s.first.begin(), s.first.end(), s.first.begin());
  for (size_t r = 0; r < m * k; ++r) {
    s.grouped[r] = s.first[s.chosen[r]]++;  // (first[e] ends at first[e + 1]...)
    s.row_of[s.grouped[r]] = static_cast<uint32_t>(r / k);
  }
  std::rotate(s.first.begin(), s.first.end() - 1, s.first.end());           // (...so shifting it back restores the starts)
  s.first[0] = 0;
  split(pool, m * k, 64, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) std::copy(x + r / k * dim, x + (r / k + 1) * dim, s.in.data() + s.grouped[r] * dim);
  });

  // The shared expert (Qwen 2 MoE) on the rows before `out` (which may be x) is written.
  const size_t sff = c.n_ff_shexp;
  float* shared_out = s.shared.data() + m * 2 * sff;
  if (!E.shared_gate.empty()) {
    linear(E.shared_gate_up, m, x, dim, s.shared.data(), 2 * sff, ctx, &E.shared_down);
    split(pool, m, 1, [&](size_t b, size_t e) { swiglu_rows(s.shared.data(), b, e, sff); });
    linear(E.shared_down, m, s.shared.data(), 2 * sff, shared_out, dim, ctx, nullptr);
    for (size_t i = 0; i < m; ++i) {  // gate: sigmoid(ffn_gate_inp_shexp · x)
      float g = 0;
      for (size_t j = 0; j < dim; ++j) g += E.shared_gate[j] * x[i * dim + j];
      const float sig = 1.0f / (1.0f + std::exp(-g));
      for (size_t j = 0; j < dim; ++j) shared_out[i * dim + j] *= sig;
    }
  }

  // Each chosen expert once over its rows, all experts in one job (matmul_group): gate|up,
  // SwiGLU, then down. An expert of one row reads the row where it is (so a decode step's
  // experts share one packed input), one of several rows its grouped copies.
  std::vector<uint32_t>& first = s.first;
  auto rows_of = [&](size_t e) { return static_cast<size_t>(first[e + 1] - first[e]); };
  const PackedWeights* first_down = nullptr;  // (prefetched by the threads that finish the gate|up job early)
  s.parts.clear();
  for (size_t e = 0; e < ne; ++e) {
    if (rows_of(e) == 0) continue;
    const float* in = rows_of(e) == 1 ? x + s.row_of[first[e]] * dim : s.in.data() + first[e] * dim;
    for (size_t i = 0, col = 0; i < E.gate_up[e].parts.size(); col += E.gate_up[e].parts[i++].n()) {
      s.parts.push_back({&E.gate_up[e].parts[i], rows_of(e), in, s.hidden.data() + first[e] * 2 * ff + col, dim, 2 * ff});
    }
    if (!first_down) first_down = &E.down[e];
  }
  matmul_group(s.parts, ctx, first_down);
  split(pool, m * k, 8, [&](size_t b, size_t e) { swiglu_rows(s.hidden.data(), b, e, ff); });
  s.parts.clear();
  for (size_t e = 0; e < ne; ++e) {
    if (rows_of(e) == 0) continue;
    s.parts.push_back({&E.down[e], rows_of(e), s.hidden.data() + first[e] * 2 * ff, s.out.data() + first[e] * dim, 2 * ff, dim});
  }
  matmul_group(s.parts, ctx, next);

  // out[i] = Σ_s w_s · expert output, summed in slot order (+ the gated shared expert).
  split(pool, m, 4, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      float* y = out + i * dim;
      for (size_t sl = 0; sl < k; ++sl) {
        const float w = s.weight[i * k + sl];
        const float* o = s.out.data() + s.grouped[i * k + sl] * dim;
        if (sl == 0) {
          for (size_t j = 0; j < dim; ++j) y[j] = o[j] * w;
        } else {
          for (size_t j = 0; j < dim; ++j) y[j] += o[j] * w;
        }
      }
      if (!E.shared_gate.empty()) {
        for (size_t j = 0; j < dim; ++j) y[j] += shared_out[i * dim + j];
      }
    }
  });
}

void count_active(const Model& model, LoadStats& st) {
  const Config& c = model.config();
  double bytes = 0, ops = 0, int8 = 0;
  auto count = [&](const PackedWeights& w, double part) {
    bytes += part * static_cast<double>(w.bytes());
    ops += part * 2.0 * static_cast<double>(w.n() * w.k());
    if (is_block_type(w.type())) int8 += part * 2.0 * static_cast<double>(w.n() * w.k());
  };
  for (const PackedWeights* w : model.weights()) count(*w, 1.0);
  const double unused = c.n_expert ? 1.0 - static_cast<double>(c.n_expert_used) / static_cast<double>(c.n_expert) : 0.0;
  for (const Layer& L : model.layers()) {
    for (size_t e = 0; e < L.moe.down.size(); ++e) {
      for (const PackedWeights& p : L.moe.gate_up[e].parts) count(p, -unused);
      count(L.moe.down[e], -unused);
    }
  }
  st.active_bytes = static_cast<size_t>(std::llround(bytes));
  st.matmul_ops = static_cast<size_t>(std::llround(ops));
  st.int8_ops = static_cast<size_t>(std::llround(int8));
}

void decode_weights(const Model& model, const State& s, std::vector<const PackedWeights*>& out) {
  out.clear();
  const Config& c = model.config();
  for (size_t l = 0; l < model.layers().size(); ++l) {
    const Layer& L = model.layers()[l];
    for (const PackedWeights& p : L.qkv.parts) out.push_back(&p);
    out.push_back(&L.wo);
    if (L.moe.down.empty()) {
      for (const PackedWeights& p : L.gate_up.parts) out.push_back(&p);
      out.push_back(&L.w_down);
      continue;
    }
    out.push_back(&L.moe.router);
    for (size_t sl = 0; sl < c.n_expert_used; ++sl) {
      const uint32_t e = s.moe().last[l * c.n_expert_used + sl];
      for (const PackedWeights& p : L.moe.gate_up[e].parts) out.push_back(&p);
      out.push_back(&L.moe.down[e]);
    }
    for (const PackedWeights& p : L.moe.shared_gate_up.parts) out.push_back(&p);
    if (!L.moe.shared_gate.empty()) out.push_back(&L.moe.shared_down);
  }
  out.push_back(&model.output());
}

}  // namespace qmm::llm
