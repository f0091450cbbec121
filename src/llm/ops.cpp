#include "llm/ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "llm/attention/attend_kernel.h"
#include "llm/attention/vec8.h"
#include "llm/vector_clones.h"

namespace qmm::llm {
namespace {

// gate[i] = gate[i] / (1 + e^-gate[i]) · up[i]
[[gnu::always_inline]] inline void silu_mul(float* gate, const float* up, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v8 g = load8(gate + i);
    store8(gate + i, g / (1.0f + exp8(-g)) * load8(up + i));
  }
  for (; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// gate[i] = gelu_tanh(gate[i]) · up[i]
[[gnu::always_inline]] inline void gelu_mul(float* gate, const float* up, size_t n) {
  constexpr float k2 = 2.0f * 0.7978845608028654f, c = 0.044715f;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v8 x = load8(gate + i);
    store8(gate + i, x / (1.0f + exp8(-k2 * (x + c * x * x * x))) * load8(up + i));
  }
  for (; i < n; ++i) {
    const float x = gate[i];
    gate[i] = x / (1.0f + std::exp(-k2 * (x + c * x * x * x))) * up[i];
  }
}

}  // namespace

// The exported functions below only pass pointers and scalars: vectors stay inside the
// inlined helpers (no vector crosses a call between differently compiled functions).

// H heads (hd % 8 == 0) of `rows` query rows, each K and V vector loaded once for the H.
template <size_t H>
[[gnu::always_inline]] inline void attend_rows(const float* q, size_t q_stride, const float* k, const float* v, size_t kv_stride,
                                               size_t hd, size_t pos0, size_t rows, float scale, float* att, float* out,
                                               size_t out_stride, float softcap, KvRing ring) {
  const size_t att_stride = pos0 + rows;
  for (size_t r = 0; r < rows; ++r) {
    const size_t len = pos0 + r + 1, n0 = std::min(len, ring.slots - ring.start);  // positions before the ring wraps
    const float *k0 = k + ring.start * kv_stride, *v0 = v + ring.start * kv_stride;
    // Scores: att_h[p] = scale · q_h·k_p
    // (the first row brings the V rows in; the others find them in cache)
    scores<H>(q + r * q_stride, k0, r == 0 ? v0 : nullptr, kv_stride, hd, n0, scale, att, att_stride);
    scores<H>(q + r * q_stride, k, r == 0 ? v : nullptr, kv_stride, hd, len - n0, scale, att + n0, att_stride);
    for (size_t h = 0; softcap > 0 && h < H; ++h) cap_scores(att + h * att_stride, len, softcap);
    // Softmax numerators (the 1/sum is applied to the output)
    float inv[H];
    for (size_t h = 0; h < H; ++h) {
      float* a = att + h * att_stride;
      inv[h] = 1.0f / exp_minus(a, len, max_of(a, len));
    }
    // out_h = Σ_p softmax_h,p · v_p
    weighted_values<H>(att, att_stride, v0, n0, v, kv_stride, hd, len, inv, out + r * out_stride, hd);
  }
}

// One head, any head_dim.
static void attend_plain(const float* q, size_t q_stride, const float* k, const float* v, size_t kv_stride, size_t hd, size_t pos0,
                         size_t rows, float scale, float* att, float* out, size_t out_stride, float softcap, KvRing ring) {
  auto at = [&](size_t p) { return (p < ring.slots - ring.start ? ring.start + p : p - (ring.slots - ring.start)) * kv_stride; };
  for (size_t r = 0; r < rows; ++r) {
    const float* qr = q + r * q_stride;
    float* o = out + r * out_stride;
    const size_t len = pos0 + r + 1;
    for (size_t p = 0; p < len; ++p) att[p] = dot(qr, k + at(p), hd) * scale;
    if (softcap > 0) cap_scores(att, len, softcap);
    const float sum = exp_minus(att, len, max_of(att, len));
    std::fill(o, o + hd, 0.0f);
    for (size_t j = 0; j < len; ++j) {
      for (size_t d = 0; d < hd; ++d) o[d] += att[j] * v[at(j) + d];
    }
    for (size_t d = 0; d < hd; ++d) o[d] /= sum;
  }
}

QMM_VECTOR_CLONES
void attend_heads(const float* q, size_t q_stride, size_t heads, const float* k, const float* v, size_t kv_stride, size_t hd,
                  size_t pos0, size_t rows, float scale, float* att, float* out, size_t out_stride, float softcap, KvRing ring) {
  const FlushSubnormals flush;  // as the attention kernels (attention/attend_kernel.h): no subnormal sums
  for (size_t h = 0; h < heads;) {
    const float* qh = q + h * hd;
    float* oh = out + h * hd;
    if (hd % 8 != 0) {
      attend_plain(qh, q_stride, k, v, kv_stride, hd, pos0, rows, scale, att, oh, out_stride, softcap, ring);
      h += 1;
    } else if (heads - h >= kAttendHeads) {
      attend_rows<kAttendHeads>(qh, q_stride, k, v, kv_stride, hd, pos0, rows, scale, att, oh, out_stride, softcap, ring);
      h += kAttendHeads;
    } else if (heads - h == 3) {  // a GQA group of 3 (Llama 3.2 3B) reads each K/V row once, not as 2 + 1
      attend_rows<3>(qh, q_stride, k, v, kv_stride, hd, pos0, rows, scale, att, oh, out_stride, softcap, ring);
      h += 3;
    } else if (heads - h >= 2) {
      attend_rows<2>(qh, q_stride, k, v, kv_stride, hd, pos0, rows, scale, att, oh, out_stride, softcap, ring);
      h += 2;
    } else {
      attend_rows<1>(qh, q_stride, k, v, kv_stride, hd, pos0, rows, scale, att, oh, out_stride, softcap, ring);
      h += 1;
    }
  }
}

void attend_chunk(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk, size_t pos0,
                  size_t rows, float scale, float softcap, float* scratch, float* part) {
  attend_kernel().chunk(q, q_stride, heads, kv, hd, chunk, pos0, rows, scale, softcap, scratch, part);
}

QMM_VECTOR_CLONES
void attend_combine(float* acc, const float* part, size_t count, size_t hd) {
  // A partial whose maximum lies far below the other's is scaled by a tiny e^(m' − m): subnormal
  // products, a microcode assist each, unless flushed as in the kernels (attend_kernel.h).
  const FlushSubnormals flush;
  const size_t ps = attend_partial_size(hd);
  for (size_t i = 0; i < count; ++i) {
    float* a = acc + i * ps;
    const float* b = part + i * ps;
    if (b[1] == 0) continue;  // (l >= 1 for a chunk with positions: its largest term is e^0)
    if (a[1] == 0) {
      std::copy(b, b + ps, a);
      continue;
    }
    // One of the factors is e^0 = 1 exactly: one exp per (row, head), the same bits as two.
    const bool a_max = a[0] >= b[0];
    const float m = a_max ? a[0] : b[0], f = std::exp(a_max ? b[0] - m : a[0] - m);
    const float fa = a_max ? 1.0f : f, fb = a_max ? f : 1.0f;
    a[0] = m;
    a[1] = a[1] * fa + b[1] * fb;
    for (size_t d = 2; d < ps; ++d) a[d] = a[d] * fa + b[d] * fb;
  }
}

QMM_VECTOR_CLONES
void attend_finish(const float* acc, size_t rows, size_t heads, size_t hd, float* out, size_t out_stride) {
  const size_t ps = attend_partial_size(hd);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t h = 0; h < heads; ++h) {
      const float* a = acc + (r * heads + h) * ps;
      const float inv = 1.0f / a[1];
      float* o = out + r * out_stride + h * hd;
      for (size_t d = 0; d < hd; ++d) o[d] = a[2 + d] * inv;
    }
  }
}

std::string attention_trace(KvTypes kv) {
  const std::string clone = *vector_clone_name() ? std::string(", ") + vector_clone_name() + " clone" : "";
  if (kv.k == KvType::f32 && kv.v == KvType::f32) return "attend_heads (K f32, V f32: up to 4 query heads per K/V row read)" + clone;
  return std::string(attend_kernel().name) + " (K " + kv_type_name(kv.k) + (kv_rotated(kv.k) ? " Hadamard-rotated" : "") +
         (attend_int8_keys(kv.k) ? ", int8 Q·K" : "") + ", V " + kv_type_name(kv.v) + ": chunks of " + std::to_string(kAttendChunk) +
         " positions, split-KV for decode rows" +
         (attend_kernel().key_panel ? ", prefill tiles from a key-major panel)" : ")");
}

QMM_VECTOR_CLONES
void rmsnorm(float* out, const float* x, const float* gain, size_t n, float eps) {
  const float inv = 1.0f / std::sqrt(dot(x, x, n) / static_cast<float>(n) + eps);
  for (size_t i = 0; i < n; ++i) out[i] = x[i] * inv * gain[i];
}

QMM_VECTOR_CLONES
void swiglu(float* gate, const float* up, size_t n) { silu_mul(gate, up, n); }

QMM_VECTOR_CLONES
void geglu(float* gate, const float* up, size_t n) { gelu_mul(gate, up, n); }

QMM_VECTOR_CLONES
void softcap_logits(float* x, size_t n, float cap) { cap_scores(x, n, cap); }

}  // namespace qmm::llm
