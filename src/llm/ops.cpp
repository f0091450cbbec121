#include "llm/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

// x86-64 ELF: an x86-64-v3 (AVX2, FMA) clone and a baseline clone of each function, chosen at
// load time by CPU features ("arch=haswell" would instead test for that CPU model).
#if defined(__x86_64__) && defined(__ELF__)
#define QMM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define QMM_VECTOR_CLONES
#endif

namespace qmm::llm {
namespace {

// Eight floats as one vector value (GCC/Clang vector extension): one ymm register in the
// x86-64-v3 clone, two xmm in the baseline, two NEON registers on Arm.
using v8 = float __attribute__((vector_size(32)));
[[gnu::always_inline]] inline v8 load8(const float* p) {
  v8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, v8 v) { std::memcpy(p, &v, sizeof v); }
[[gnu::always_inline]] inline float hsum(v8 v) { return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7])); }

// Σ a[i]·b[i] in eight independent partial sums.
[[gnu::always_inline]] inline float dot(const float* a, const float* b, size_t n) {
  v8 acc{};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) acc += load8(a + i) * load8(b + i);
  float s = hsum(acc);
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// scores[p] = scale · q·k_p for p < len: four keys per pass, so q is loaded once for four.
// head_dim % 8 == 0.
[[gnu::always_inline]] inline void scores(const float* q, const float* k, size_t kv_stride, size_t hd, size_t len, float scale, float* att) {
  size_t p = 0;
  for (; p + 4 <= len; p += 4) {
    const float* k0 = k + p * kv_stride;
    const float *k1 = k0 + kv_stride, *k2 = k1 + kv_stride, *k3 = k2 + kv_stride;
    v8 a0{}, a1{}, a2{}, a3{};
    for (size_t d = 0; d < hd; d += 8) {
      const v8 qv = load8(q + d);
      a0 += qv * load8(k0 + d);
      a1 += qv * load8(k1 + d);
      a2 += qv * load8(k2 + d);
      a3 += qv * load8(k3 + d);
    }
    att[p] = hsum(a0) * scale;
    att[p + 1] = hsum(a1) * scale;
    att[p + 2] = hsum(a2) * scale;
    att[p + 3] = hsum(a3) * scale;
  }
  for (; p < len; ++p) att[p] = dot(q, k + p * kv_stride, hd) * scale;
}

// out[0..hd) = inv · Σ_p att[p] · v_p, 64 columns at a time held in eight vectors. hd % 8 == 0.
[[gnu::always_inline]] inline void weighted_values(const float* att, const float* v, size_t kv_stride, size_t hd, size_t len, float inv,
                            float* out) {
  for (size_t d0 = 0; d0 < hd; d0 += 64) {
    const size_t w = std::min<size_t>(64, hd - d0) / 8;  // vectors in this block
    v8 o[8] = {};
    if (w == 8) {
      for (size_t p = 0; p < len; ++p) {
        const float* vp = v + p * kv_stride + d0;
        for (size_t j = 0; j < 8; ++j) o[j] += att[p] * load8(vp + 8 * j);
      }
    } else {
      for (size_t p = 0; p < len; ++p) {
        const float* vp = v + p * kv_stride + d0;
        for (size_t j = 0; j < w; ++j) o[j] += att[p] * load8(vp + 8 * j);
      }
    }
    for (size_t j = 0; j < w; ++j) store8(out + d0 + 8 * j, o[j] * inv);
  }
}

}  // namespace

QMM_VECTOR_CLONES
void attend_head(const float* q, size_t q_stride, const float* k, const float* v, size_t kv_stride, size_t hd,
                 size_t pos0, size_t rows, float scale, float* att, float* out, size_t out_stride) {
  for (size_t r = 0; r < rows; ++r) {
    const float* qr = q + r * q_stride;
    float* o = out + r * out_stride;
    const size_t len = pos0 + r + 1;
    // Scores: att[p] = scale · q·k_p
    if (hd % 8 == 0) {
      scores(qr, k, kv_stride, hd, len, scale, att);
    } else {
      for (size_t p = 0; p < len; ++p) att[p] = dot(qr, k + p * kv_stride, hd) * scale;
    }
    // Softmax numerators (the 1/sum is applied to the output)
    float mx = -INFINITY;
    for (size_t p = 0; p < len; ++p) mx = std::max(mx, att[p]);
    float sum = 0.0f;
    for (size_t p = 0; p < len; ++p) sum += (att[p] = std::exp(att[p] - mx));
    // out = Σ_p softmax_p · v_p
    if (hd % 8 == 0) {
      weighted_values(att, v, kv_stride, hd, len, 1.0f / sum, o);
    } else {
      std::fill(o, o + hd, 0.0f);
      for (size_t p = 0; p < len; ++p) {
        for (size_t d = 0; d < hd; ++d) o[d] += att[p] * v[p * kv_stride + d];
      }
      for (size_t d = 0; d < hd; ++d) o[d] /= sum;
    }
  }
}

QMM_VECTOR_CLONES
void rmsnorm(float* out, const float* x, const float* gain, size_t n, float eps) {
  const float inv = 1.0f / std::sqrt(dot(x, x, n) / static_cast<float>(n) + eps);
  for (size_t i = 0; i < n; ++i) out[i] = x[i] * inv * gain[i];
}

QMM_VECTOR_CLONES
void swiglu(float* gate, const float* up, size_t n) {
  for (size_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace qmm::llm
