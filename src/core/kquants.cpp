// Reference quantizers and dequantizers of Q4_K, Q5_K, Q6_K and IQ4_NL (kquants.h).
// Every float expression keeps ggml's order of operations, and this file is compiled with
// -ffp-contract=off (src/CMakeLists.txt): a fused multiply-add would change the blocks.
#include "core/kquants.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/fp16.h"

namespace qmm {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // a group whose largest |x| is below this is all zero

// Round to nearest, ties to even, through the float adder (ggml's nearest_int): valid for
// |x| <= 2^22 - 1, which every caller guarantees by construction.
int nearest_int(float x) {
  const float biased = x + 12582912.0f;  // 1.5 · 2^23: the integer part lands in the mantissa
  int32_t bits;
  std::memcpy(&bits, &biased, 4);
  return (bits & 0x007fffff) - 0x00400000;
}

// Scale and min of one group of n values with levels 0..nmax, weighted least squares over a
// grid of nstep + 1 inverse scales (rmin + rdelta·i + nmax)/(max − min) around the range's
// own; the group's min is clamped to <= 0. Returns the scale, writes −min and the levels.
float fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* levels, float* neg_min, float rmin,
                    float rdelta, int nstep) {
  float lo = x[0], hi = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::fill(levels, levels + n, uint8_t{0});
    *neg_min = -lo;
    return 0.0f;
  }
  float inv = nmax / (hi - lo);
  float scale = 1 / inv;
  float best_err = 0;
  for (int i = 0; i < n; ++i) {
    levels[i] = static_cast<uint8_t>(std::clamp(nearest_int(inv * (x[i] - lo)), 0, nmax));
    const float diff = scale * levels[i] + lo - x[i];
    best_err += w[i] * (diff * diff);
  }
  uint8_t trial[32];
  for (int step = 0; step <= nstep; ++step) {
    inv = (rmin + rdelta * step + nmax) / (hi - lo);
    float sl = 0, sl2 = 0, sxl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(inv * (x[i] - lo)), 0, nmax);
      trial[i] = static_cast<uint8_t>(l);
      sl += w[i] * l;
      sl2 += w[i] * l * l;
      sxl += w[i] * l * x[i];
    }
    const float det = sum_w * sl2 - sl * sl;
    if (!(det > 0)) continue;
    float s = (sum_w * sxl - sum_x * sl) / det;
    float mn = (sl2 * sum_x - sl * sxl) / det;
    if (mn > 0) {
      mn = 0;
      s = sxl / sl2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = s * trial[i] + mn - x[i];
      err += w[i] * (diff * diff);
    }
    if (err < best_err) {
      std::copy(trial, trial + n, levels);
      best_err = err;
      scale = s;
      lo = mn;
    }
  }
  *neg_min = -lo;
  return scale;
}

// Symmetric levels −nmax..nmax−1 (stored + nmax) for n values, weights x², trying 19 scales
// around −nmax / (value of largest magnitude); returns the least-squares scale.
float fit_scale_symmetric(int n, int nmax, const float* x, int8_t* levels) {
  float amax = 0, peak = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      peak = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(levels, levels + n, int8_t{0});
    return 0.0f;
  }
  auto level = [&](float inv, int i) { return std::clamp(nearest_int(inv * x[i]), -nmax, nmax - 1); };
  float inv = -nmax / peak;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = level(inv, i);
    levels[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    inv = -(nmax + 0.1f * step) / peak;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = level(inv, i);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) levels[i] = static_cast<int8_t>(level(inv, i) + nmax);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Q4_K / Q5_K: the sub-block scales and mins of one super-block (nmax 15 / 31, and the search
// grid ggml uses for each), quantized to 6 bits against d and dmin; then the levels again
// against the stored scales. Writes d, dmin, scales[12]; returns the 256 levels.
void quantize_super_asym(const float* x, int nmax, float rmin, int nstep, uint16_t* d, uint16_t* dmin,
                         uint8_t scales[12], uint8_t levels[256]) {
  float sub_scale[8], sub_min[8], w[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) w[l] = av_x + std::fabs(xs[l]);
    sub_scale[j] = fit_scale_min(32, nmax, xs, w, levels + 32 * j, &sub_min[j], rmin, 0.1f, nstep);
    if (sub_scale[j] > max_scale) max_scale = sub_scale[j];
    if (sub_min[j] > max_min) max_min = sub_min[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  std::memset(scales, 0, 12);
  for (int j = 0; j < 8; ++j) {
    const uint8_t ls = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * sub_scale[j])));
    const uint8_t lm = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * sub_min[j])));
    if (j < 4) {
      scales[j] = ls;
      scales[j + 4] = lm;
    } else {  // low 4 bits in byte j + 4, the top 2 in bits 6-7 of bytes j − 4 (scale) and j (min)
      scales[j + 4] = static_cast<uint8_t>((ls & 0xf) | ((lm & 0xf) << 4));
      scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      scales[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
  }
  *d = fp32_to_fp16(max_scale / 63.f);
  *dmin = fp32_to_fp16(max_min / 63.f);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    kscale_min(scales, j, &sc, &m);
    const float dj = fp16_to_fp32(*d) * sc;
    if (dj == 0) continue;
    const float mj = fp16_to_fp32(*dmin) * m;
    for (int l = 0; l < 32; ++l) {
      levels[32 * j + l] = static_cast<uint8_t>(std::clamp(nearest_int((x[32 * j + l] + mj) / dj), 0, nmax));
    }
  }
}

// The index of the code-book entry nearest to v (ties to the lower entry, as ggml's
// best_index_int8 resolves them).
int nearest_code(float v) {
  if (v <= kIq4nlValues[0]) return 0;
  if (v >= kIq4nlValues[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (v < kIq4nlValues[mid]) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return v - kIq4nlValues[hi - 1] < kIq4nlValues[hi] - v ? hi - 1 : hi;
}

// The NaN policy (kernels/ukernel.h): a block with a NaN or ±Inf gets a NaN scale (and zero
// quants), so every product with it is NaN; ggml leaves such blocks undefined.
bool all_finite(const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return false;
  }
  return true;
}

}  // namespace

void quantize_row_q4_k(const float* x, BlockQ4_K* y, size_t k) {
  for (size_t i = 0; i < k / kSuperBlock; ++i, x += kSuperBlock) {
    uint8_t levels[256];
    if (!all_finite(x, kSuperBlock)) {
      y[i] = BlockQ4_K{kFp16NaN, kFp16NaN, {}, {}};
      continue;
    }
    quantize_super_asym(x, 15, -1.f, 20, &y[i].d, &y[i].dmin, y[i].scales, levels);
    for (int p = 0; p < 4; ++p) {
      for (int l = 0; l < 32; ++l) y[i].qs[32 * p + l] = static_cast<uint8_t>(levels[64 * p + l] | (levels[64 * p + 32 + l] << 4));
    }
  }
}

void quantize_row_q5_k(const float* x, BlockQ5_K* y, size_t k) {
  for (size_t i = 0; i < k / kSuperBlock; ++i, x += kSuperBlock) {
    uint8_t levels[256];
    if (!all_finite(x, kSuperBlock)) {
      y[i] = BlockQ5_K{kFp16NaN, kFp16NaN, {}, {}, {}};
      continue;
    }
    quantize_super_asym(x, 31, -0.5f, 15, &y[i].d, &y[i].dmin, y[i].scales, levels);
    std::memset(y[i].qh, 0, 32);
    for (int j = 0; j < 8; ++j) {
      for (int l = 0; l < 32; ++l) y[i].qh[l] |= static_cast<uint8_t>((levels[32 * j + l] >> 4) << j);
    }
    for (int p = 0; p < 4; ++p) {
      for (int l = 0; l < 32; ++l) {
        y[i].qs[32 * p + l] = static_cast<uint8_t>((levels[64 * p + l] & 0xf) | ((levels[64 * p + 32 + l] & 0xf) << 4));
      }
    }
  }
}

void quantize_row_q6_k(const float* x, BlockQ6_K* y, size_t k) {
  for (size_t i = 0; i < k / kSuperBlock; ++i, x += kSuperBlock) {
    int8_t levels[256];
    float sub_scale[16];
    float max_scale = 0, max_abs = 0;
    for (int t = 0; t < 16; ++t) {
      sub_scale[t] = fit_scale_symmetric(16, 32, x + 16 * t, levels + 16 * t);
      if (std::fabs(sub_scale[t]) > max_abs) {
        max_abs = std::fabs(sub_scale[t]);
        max_scale = sub_scale[t];
      }
    }
    BlockQ6_K& b = y[i];
    std::memset(&b, 0, sizeof b);
    if (!all_finite(x, kSuperBlock)) {
      b.d = kFp16NaN;
      continue;
    }
    if (max_abs < kGroupMaxEps) continue;  // all zero: d = 0
    const float inv = -128.f / max_scale;
    b.d = fp32_to_fp16(1 / inv);
    for (int t = 0; t < 16; ++t) b.scales[t] = static_cast<int8_t>(std::min(127, nearest_int(inv * sub_scale[t])));
    for (int t = 0; t < 16; ++t) {
      const float dt = fp16_to_fp32(b.d) * b.scales[t];
      if (dt == 0) continue;
      for (int l = 0; l < 16; ++l) levels[16 * t + l] = static_cast<int8_t>(std::clamp(nearest_int(x[16 * t + l] / dt), -32, 31) + 32);
    }
    for (int h = 0; h < 2; ++h) {
      const int8_t* L = levels + 128 * h;
      for (int l = 0; l < 32; ++l) {
        b.ql[64 * h + l] = static_cast<uint8_t>((L[l] & 0xf) | ((L[l + 64] & 0xf) << 4));
        b.ql[64 * h + 32 + l] = static_cast<uint8_t>((L[l + 32] & 0xf) | ((L[l + 96] & 0xf) << 4));
        b.qh[32 * h + l] = static_cast<uint8_t>((L[l] >> 4) | ((L[l + 32] >> 4) << 2) | ((L[l + 64] >> 4) << 4) | ((L[l + 96] >> 4) << 6));
      }
    }
  }
}

// ggml's quantize_iq4_nl without importance (weights x², 15 trial scales), the path
// llama-quantize takes.
void quantize_row_iq4_nl(const float* x, BlockIQ4_NL* y, size_t k) {
  constexpr int kTries = 7;
  for (size_t i = 0; i < k / 32; ++i, x += 32) {
    float w[32];
    float amax = 0, peak = 0;
    for (int j = 0; j < 32; ++j) {
      w[j] = x[j] * x[j];
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        peak = x[j];
      }
    }
    // The weighted least-squares scale of the levels that `inv` gives, and its merit sumqx²/sumq2.
    auto fit = [&](float inv, float* sumqx, float* sumq2) {
      *sumqx = *sumq2 = 0;
      for (int j = 0; j < 32; ++j) {
        const float q = kIq4nlValues[nearest_code(inv * x[j])];
        *sumqx += w[j] * q * x[j];
        *sumq2 += w[j] * q * q;
      }
    };
    if (!all_finite(x, 32)) {
      y[i] = BlockIQ4_NL{kFp16NaN, {}};
      continue;
    }
    float d = 0;
    if (amax >= kGroupMaxEps) {
      float sumqx, sumq2;
      fit(1 / (-peak / kIq4nlValues[0]), &sumqx, &sumq2);
      d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
      float best = d * sumqx;
      for (int t = -kTries; t <= kTries; ++t) {
        fit((t + kIq4nlValues[0]) / peak, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
          d = sumqx / sumq2;
          best = d * sumqx;
        }
      }
    }
    y[i].d = fp32_to_fp16(d);
    const float inv = d != 0 ? 1 / d : 0;
    for (int j = 0; j < 16; ++j) {
      y[i].qs[j] = static_cast<uint8_t>(nearest_code(inv * x[j]) | (nearest_code(inv * x[j + 16]) << 4));
    }
  }
}

namespace {

// Q4_K / Q5_K super-block i -> 256 floats (qh: nullptr for Q4_K).
void dequantize_asym(uint16_t d16, uint16_t dmin16, const uint8_t* scales, const uint8_t* qs, const uint8_t* qh, float* y) {
  const float d = fp16_to_fp32(d16), dmin = fp16_to_fp32(dmin16);
  for (int j = 0; j < 8; ++j, y += 32) {
    uint8_t sc, m;
    kscale_min(scales, j, &sc, &m);
    const float dj = d * sc, mj = dmin * m;
    const uint8_t* q = qs + 32 * (j / 2);
    for (int l = 0; l < 32; ++l) {
      const int v = (j % 2 ? q[l] >> 4 : q[l] & 0xf) + (qh ? ((qh[l] >> j) & 1) * 16 : 0);
      y[l] = dj * v - mj;
    }
  }
}

}  // namespace

void dequantize_row_q4_k(const BlockQ4_K* x, float* y, size_t k) {
  for (size_t i = 0; i < k / kSuperBlock; ++i, y += kSuperBlock) dequantize_asym(x[i].d, x[i].dmin, x[i].scales, x[i].qs, nullptr, y);
}

void dequantize_row_q5_k(const BlockQ5_K* x, float* y, size_t k) {
  for (size_t i = 0; i < k / kSuperBlock; ++i, y += kSuperBlock) dequantize_asym(x[i].d, x[i].dmin, x[i].scales, x[i].qs, x[i].qh, y);
}

void dequantize_row_q6_k(const BlockQ6_K* x, float* y, size_t k) {
  for (size_t i = 0; i < k / kSuperBlock; ++i) {
    const float d = fp16_to_fp32(x[i].d);
    for (int e = 0; e < 256; ++e, ++y) {
      const int h = e / 128, t = e % 128 / 32, l = e % 32;
      const uint8_t ql = x[i].ql[64 * h + 32 * (t % 2) + l];
      const int lo = t < 2 ? ql & 0xf : ql >> 4;
      const int q = (lo | (((x[i].qh[32 * h + l] >> (2 * t)) & 3) << 4)) - 32;
      *y = d * x[i].scales[e / 16] * q;
    }
  }
}

void dequantize_row_iq4_nl(const BlockIQ4_NL* x, float* y, size_t k) {
  for (size_t i = 0; i < k / 32; ++i, y += 32) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * kIq4nlValues[x[i].qs[j] & 0xf];
      y[j + 16] = d * kIq4nlValues[x[i].qs[j] >> 4];
    }
  }
}

}  // namespace qmm
