// The vector loops attention is made of (scores, softmax numerators, weighted values), shared by
// the F32-cache attention in ops.cpp and the attention kernels of attention/: each translation
// unit that includes this header compiles them with its own flags (an x86-64-v3 clone, an ISA
// variant's file, the portable variant), so nothing here crosses a call between differently
// compiled functions. Eight floats are one GCC/Clang vector value (v8): one ymm register with
// AVX, two xmm in the x86 baseline, two NEON registers on Arm.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace qmm::llm {
namespace {

using v8 = float __attribute__((vector_size(32)));
[[gnu::always_inline]] inline v8 load8(const float* p) {
  v8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, v8 v) { std::memcpy(p, &v, sizeof v); }
using v8i = int32_t __attribute__((vector_size(32)));

// e^x for eight floats (relative error < 1e-7): x = n·ln2 + r with |r| ≤ ln2/2, e^r by the
// Cephes polynomial, 2^n put into the exponent bits. x is clamped to [-87, 88].
[[gnu::always_inline]] inline v8 exp8(v8 x) {
  constexpr float kRound = 12582912.0f;  // 1.5·2^23: adding it rounds to an integer
  x = x < -87.0f ? v8{} - 87.0f : x;
  x = x > 88.0f ? v8{} + 88.0f : x;
  const v8 t = x * 1.44269504088896341f + kRound;
  const v8 n = t - kRound;
  const v8 r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  v8 p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const v8 e = p * (r * r) + r + 1.0f;
  const v8i two_n = (std::bit_cast<v8i>(t) - std::bit_cast<v8i>(v8{} + kRound) + 127) << 23;
  return e * std::bit_cast<v8>(two_n);
}

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

// Lane j of the result = Σ lanes of a[j]: eight horizontal sums in seven adds (pairs, then
// quads, then halves of the vector), instead of eight separate reductions. V: v8, or v8i (int8
// Q·K's exact block sums).
template <class V>
[[gnu::always_inline]] inline V hsum8(const V a[8]) {
  auto pairs = [](V x, V y) {  // x0+x1, y0+y1, x2+x3, y2+y3, ...
    return __builtin_shufflevector(x, y, 0, 8, 2, 10, 4, 12, 6, 14) + __builtin_shufflevector(x, y, 1, 9, 3, 11, 5, 13, 7, 15);
  };
  auto quads = [](V x, V y) {  // from two pairs() results: the sums of lanes 0-3 and 4-7
    return __builtin_shufflevector(x, y, 0, 1, 8, 9, 4, 5, 12, 13) + __builtin_shufflevector(x, y, 2, 3, 10, 11, 6, 7, 14, 15);
  };
  const V lo = quads(pairs(a[0], a[1]), pairs(a[2], a[3])), hi = quads(pairs(a[4], a[5]), pairs(a[6], a[7]));
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 8, 9, 10, 11) + __builtin_shufflevector(lo, hi, 4, 5, 6, 7, 12, 13, 14, 15);
}

// Σ a[i]·b[i] (n % 8 == 0) with the lanes summed in hsum8's order: a key scored in scores()'s
// tail gets the bits it gets in a group, so the scores of a window do not depend on where its
// ring buffer wraps (nor a sequence's tokens on the batch that sized its ring).
[[gnu::always_inline]] inline float dot_as_hsum8(const float* a, const float* b, size_t n) {
  v8 acc{};
  for (size_t i = 0; i < n; i += 8) acc += load8(a + i) * load8(b + i);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// att[h·att_stride + p] = scale · q_h·k_p for H heads (q_h at q + h·hd) and p < len. A pass
// takes 8/H keys: eight independent FMA chains (head x key), each K vector loaded once for the
// H heads, reduced together by hsum8. head_dim % 8 == 0. Unless v is null, the V rows of the
// same positions (at v + p·kv_stride) are prefetched meanwhile: a decode step finds the cache
// evicted by the weights, and one stream of K rows alone leaves the core waiting on DRAM.
template <size_t H>
[[gnu::always_inline]] inline void scores(const float* q, const float* k, const float* v, size_t kv_stride, size_t hd, size_t len,
                                          float scale, float* att, size_t att_stride) {
  constexpr size_t K = 8 / H;
  size_t p = 0;
  for (; p + K <= len; p += K) {
    const float* kp = k + p * kv_stride;
    for (size_t j = 0; v && j < K; ++j)
      for (size_t d = 0; d < hd; d += 64 / sizeof(float)) __builtin_prefetch(v + (p + j) * kv_stride + d);
    v8 a[8] = {};
    for (size_t d = 0; d < hd; d += 8) {
      for (size_t h = 0; h < H; ++h) {
        const v8 qv = load8(q + h * hd + d);
        for (size_t j = 0; j < K; ++j) a[h * K + j] += qv * load8(kp + j * kv_stride + d);
      }
    }
    const v8 sums = hsum8(a) * scale;
    for (size_t h = 0; h < H; ++h)
      for (size_t j = 0; j < K; ++j) att[h * att_stride + p + j] = sums[h * K + j];
  }
  for (; p < len; ++p)
    for (size_t h = 0; h < H; ++h) att[h * att_stride + p] = dot_as_hsum8(q + h * hd, k + p * kv_stride, hd) * scale;
}

// max(x[0..n)) (no NaN among them).
[[gnu::always_inline]] inline float max_of(const float* x, size_t n) {
  float mx = -INFINITY;
  size_t i = 0;
  if (n >= 8) {
    v8 m = load8(x);
    for (i = 8; i + 8 <= n; i += 8) {
      const v8 v = load8(x + i);
      m = v > m ? v : m;
    }
    for (size_t j = 0; j < 8; ++j) mx = std::max(mx, m[j]);
  }
  for (; i < n; ++i) mx = std::max(mx, x[i]);
  return mx;
}

// out_h[0..hd) = inv[h] · Σ_p att[h·att_stride + p] · v_p for H heads (out_h at out + h·out_head), the
// len positions in two pieces: p < n0 at v0 + p·kv_stride, the others at v1 + (p - n0)·kv_stride.
// 64/H columns at a time in eight vectors: each V vector is loaded once for the H heads.
// hd % 8 == 0.
template <size_t H>
[[gnu::always_inline]] inline void weighted_values(const float* att, size_t att_stride, const float* v0, size_t n0, const float* v1,
                                                   size_t kv_stride, size_t hd, size_t len, const float* inv, float* out,
                                                   size_t out_head) {
  constexpr size_t W = 8 / H;  // vectors per head and pass
  for (size_t d0 = 0; d0 < hd; d0 += 8 * W) {
    v8 o[H][W] = {};
    // w vectors per head: the constant W (so o stays in registers), fewer in a last, narrower pass.
    auto pass = [&](auto w) {
      auto piece = [&](const float* v, const float* a, size_t n) {
        for (size_t p = 0; p < n; ++p) {
          const float* vp = v + p * kv_stride + d0;
          for (size_t h = 0; h < H; ++h) {
            const float ah = a[h * att_stride + p];
            for (size_t j = 0; j < w; ++j) o[h][j] += ah * load8(vp + 8 * j);
          }
        }
      };
      piece(v0, att, n0);
      piece(v1, att + n0, len - n0);
      for (size_t h = 0; h < H; ++h)
        for (size_t j = 0; j < w; ++j) store8(out + h * out_head + d0 + 8 * j, o[h][j] * inv[h]);
    };
    if (hd - d0 >= 8 * W) {
      pass(std::integral_constant<size_t, W>{});
    } else {
      pass((hd - d0) / 8);
    }
  }
}

// x[i] = e^(x[i] - mx); returns Σ x[i].
[[gnu::always_inline]] inline float exp_minus(float* x, size_t n, float mx) {
  v8 sums{};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v8 e = exp8(load8(x + i) - mx);
    store8(x + i, e);
    sums += e;
  }
  float sum = hsum(sums);
  for (; i < n; ++i) sum += (x[i] = std::exp(x[i] - mx));
  return sum;
}

// cap · tanh(x / cap) for eight floats, as cap − 2·cap / (e^(2x/cap) + 1) (absolute error
// ~1e-7·cap; e^ clamps at ±88, so ±Inf give ±cap and NaN stays NaN).
[[gnu::always_inline]] inline v8 cap8(v8 x, float cap) { return cap - (2.0f * cap) / (exp8(x * (2.0f / cap)) + 1.0f); }

// a[p] = cap · tanh(a[p] / cap), eight at a time; the tail through the same vector code, so a
// value gets the same bits wherever it sits (a 256k-entry vocabulary took ~5 ms per token with
// std::tanh).
inline void cap_scores(float* a, size_t n, float cap) {
  size_t p = 0;
  for (; p + 8 <= n; p += 8) store8(a + p, cap8(load8(a + p), cap));
  if (p < n) {
    float tail[8] = {};
    std::memcpy(tail, a + p, (n - p) * sizeof(float));
    store8(tail, cap8(load8(tail), cap));
    std::memcpy(a + p, tail, (n - p) * sizeof(float));
  }
}

}  // namespace
}  // namespace qmm::llm
