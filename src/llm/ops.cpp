#include "llm/ops.h"

#include <algorithm>
#include <cmath>

// x86-64 ELF: an x86-64-v3 (AVX2, FMA) clone and a baseline clone of each function, chosen at
// load time by CPU features ("arch=haswell" would instead test for that CPU model).
#if defined(__x86_64__) && defined(__ELF__)
#define QMM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define QMM_VECTOR_CLONES
#endif

namespace qmm::llm {
namespace {

// Σ a[i]·b[i] in eight independent partial sums (one vector register).
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

// The dot products of q with four keys at once (q is loaded once for the four).
inline void dot4(const float* q, const float* k0, const float* k1, const float* k2, const float* k3, size_t n,
                 float* out) {
  float a0[8] = {}, a1[8] = {}, a2[8] = {}, a3[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) {
      a0[j] += q[i + j] * k0[i + j];
      a1[j] += q[i + j] * k1[i + j];
      a2[j] += q[i + j] * k2[i + j];
      a3[j] += q[i + j] * k3[i + j];
    }
  }
  float* acc[4] = {a0, a1, a2, a3};
  const float* ks[4] = {k0, k1, k2, k3};
  for (int t = 0; t < 4; ++t) {
    const float* a = acc[t];
    float s = ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]));
    for (size_t r = i; r < n; ++r) s += q[r] * ks[t][r];
    out[t] = s;
  }
}

}  // namespace

QMM_VECTOR_CLONES
void attend_head(const float* q, size_t q_stride, const float* k, const float* v, size_t kv_stride, size_t hd,
                 size_t pos0, size_t rows, float scale, float* att, float* out, size_t out_stride) {
  for (size_t r = 0; r < rows; ++r) {
    const float* qr = q + r * q_stride;
    const size_t len = pos0 + r + 1;
    // Scores: att[p] = scale · q·k_p, four keys at a time.
    size_t p = 0;
    for (; p + 4 <= len; p += 4) {
      dot4(qr, k + p * kv_stride, k + (p + 1) * kv_stride, k + (p + 2) * kv_stride, k + (p + 3) * kv_stride, hd, att + p);
    }
    for (; p < len; ++p) att[p] = dot(qr, k + p * kv_stride, hd);
    float mx = -INFINITY;
    for (p = 0; p < len; ++p) mx = std::max(mx, att[p] *= scale);
    // Softmax (the 1/sum is applied to the output).
    float sum = 0.0f;
    for (p = 0; p < len; ++p) sum += (att[p] = std::exp(att[p] - mx));
    // out = Σ_p att[p] · v_p, four positions per pass over out.
    float* o = out + r * out_stride;
    std::fill(o, o + hd, 0.0f);
    for (p = 0; p + 4 <= len; p += 4) {
      const float a0 = att[p], a1 = att[p + 1], a2 = att[p + 2], a3 = att[p + 3];
      const float *v0 = v + p * kv_stride, *v1 = v0 + kv_stride, *v2 = v1 + kv_stride, *v3 = v2 + kv_stride;
      for (size_t d = 0; d < hd; ++d) o[d] += (a0 * v0[d] + a1 * v1[d]) + (a2 * v2[d] + a3 * v3[d]);
    }
    for (; p < len; ++p) {
      const float a = att[p];
      const float* vp = v + p * kv_stride;
      for (size_t d = 0; d < hd; ++d) o[d] += a * vp[d];
    }
    const float inv = 1.0f / sum;
    for (size_t d = 0; d < hd; ++d) o[d] *= inv;
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
