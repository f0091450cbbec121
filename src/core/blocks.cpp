#include "core/blocks.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <strings.h>

#include "core/fp16.h"

namespace qmm {

namespace {

// The signed value of largest magnitude of a 32-block (the first of equal magnitudes).
float signed_absmax(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (size_t j = 0; j < kBlock; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

// 32 levels 0..31 -> the Q5 nibbles and high bits.
void pack_q5(const uint8_t q[kBlock], uint8_t qs[kBlock / 2], uint8_t qh_bytes[4]) {
  uint32_t qh = 0;
  for (size_t j = 0; j < kBlock / 2; ++j) {
    qs[j] = static_cast<uint8_t>((q[j] & 0x0f) | ((q[j + 16] & 0x0f) << 4));
    qh |= static_cast<uint32_t>(q[j] >> 4) << j;
    qh |= static_cast<uint32_t>(q[j + 16] >> 4) << (j + 16);
  }
  std::memcpy(qh_bytes, &qh, 4);
}

}  // namespace

void quantize_row_q4_0(const float* x, BlockQ4_0* y, size_t k) {
  for (size_t b = 0; b < k / kBlock; ++b, x += kBlock) {
    const float d = signed_absmax(x) / -8.0f;
    y[b].d = fp32_to_fp16(d);
    if (!block_is_finite(x) || !fp16_is_finite(y[b].d)) {
      y[b].d = kFp16NaN;
      std::memset(y[b].qs, 0x88, sizeof(y[b].qs));  // every nibble 8: the value 0
      continue;
    }
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (size_t j = 0; j < kBlock / 2; ++j) {
      const int lo = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
      const int hi = std::min(15, static_cast<int>(static_cast<int8_t>(x[j + 16] * id + 8.5f)));
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void quantize_row_q8_0(const float* x, BlockQ8_0* y, size_t k) {
  for (size_t b = 0; b < k / kBlock; ++b, x += kBlock) {
    float amax = 0.0f;
    for (size_t j = 0; j < kBlock; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    y[b].d = fp32_to_fp16(d);
    if (!block_is_finite(x) || !fp16_is_finite(y[b].d)) {
      y[b].d = kFp16NaN;
      std::memset(y[b].qs, 0, sizeof(y[b].qs));
      continue;
    }
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (size_t j = 0; j < kBlock; ++j) y[b].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
  }
}

void quantize_row_q5_0(const float* x, BlockQ5_0* y, size_t k) {
  for (size_t b = 0; b < k / kBlock; ++b, x += kBlock) {
    const float d = signed_absmax(x) / -16.0f;
    y[b].d = fp32_to_fp16(d);
    uint8_t q[kBlock] = {};
    if (!block_is_finite(x) || !fp16_is_finite(y[b].d)) {
      y[b].d = kFp16NaN;
    } else {
      const float id = d != 0.0f ? 1.0f / d : 0.0f;
      for (size_t j = 0; j < kBlock; ++j) q[j] = static_cast<uint8_t>(std::min(31, static_cast<int>(static_cast<int8_t>(x[j] * id + 16.5f))));
    }
    pack_q5(q, y[b].qs, y[b].qh);
  }
}

void quantize_row_q5_1(const float* x, BlockQ5_1* y, size_t k) {
  for (size_t b = 0; b < k / kBlock; ++b, x += kBlock) {
    float min = x[0], max = x[0];
    for (size_t j = 1; j < kBlock; ++j) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / 31.0f;
    y[b].d = fp32_to_fp16(d);
    y[b].m = fp32_to_fp16(min);
    uint8_t q[kBlock] = {};
    if (!block_is_finite(x) || !fp16_is_finite(y[b].d) || !fp16_is_finite(y[b].m)) {
      y[b].d = y[b].m = kFp16NaN;
    } else {
      const float id = d != 0.0f ? 1.0f / d : 0.0f;
      for (size_t j = 0; j < kBlock; ++j) q[j] = static_cast<uint8_t>((x[j] - min) * id + 0.5f);
    }
    pack_q5(q, y[b].qs, y[b].qh);
  }
}

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, size_t k) {
  for (size_t b = 0; b < k / kBlock; ++b, y += kBlock) {
    const float d = fp16_to_fp32(x[b].d);
    for (size_t j = 0; j < kBlock / 2; ++j) {
      y[j] = static_cast<float>((x[b].qs[j] & 0x0f) - 8) * d;
      y[j + 16] = static_cast<float>((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, size_t k) {
  for (size_t b = 0; b < k / kBlock; ++b, y += kBlock) {
    const float d = fp16_to_fp32(x[b].d);
    for (size_t j = 0; j < kBlock; ++j) y[j] = static_cast<float>(x[b].qs[j]) * d;
  }
}

// The read-only types (converted at load), the formulas of ggml's dequantize_row_*.
void dequantize_row_q4_1(const BlockQ4_1* x, float* y, size_t k) {
  for (size_t b = 0; b < k / kBlock; ++b, y += kBlock) {
    const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
    for (size_t j = 0; j < kBlock / 2; ++j) {
      const float lo = static_cast<float>(x[b].qs[j] & 0x0f) * d;
      const float hi = static_cast<float>(x[b].qs[j] >> 4) * d;
      y[j] = lo + m;
      y[j + 16] = hi + m;
    }
  }
}

void dequantize_row_q5_0(const BlockQ5_0* x, float* y, size_t k) {
  for (size_t b = 0; b < k / kBlock; ++b, y += kBlock) {
    const float d = fp16_to_fp32(x[b].d);
    uint32_t qh;
    std::memcpy(&qh, x[b].qh, 4);
    for (uint32_t j = 0; j < kBlock / 2; ++j) {
      const uint32_t h0 = ((qh >> j) << 4) & 0x10;  // bit j -> bit 4 of element j
      const uint32_t h1 = (qh >> (j + 12)) & 0x10;  // bit j + 16 -> bit 4 of element j + 16
      const int x0 = static_cast<int>((x[b].qs[j] & 0x0fu) | h0) - 16;
      const int x1 = static_cast<int>((x[b].qs[j] >> 4) | h1) - 16;
      y[j] = static_cast<float>(x0) * d;
      y[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

void dequantize_row_q5_1(const BlockQ5_1* x, float* y, size_t k) {
  for (size_t b = 0; b < k / kBlock; ++b, y += kBlock) {
    const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
    uint32_t qh;
    std::memcpy(&qh, x[b].qh, 4);
    for (uint32_t j = 0; j < kBlock / 2; ++j) {
      const uint32_t h0 = ((qh >> j) << 4) & 0x10;
      const uint32_t h1 = (qh >> (j + 12)) & 0x10;
      const float lo = static_cast<float>((x[b].qs[j] & 0x0fu) | h0) * d;
      const float hi = static_cast<float>((x[b].qs[j] >> 4) | h1) * d;
      y[j] = lo + m;
      y[j + 16] = hi + m;
    }
  }
}

void dequantize_row_bf16(const uint16_t* x, float* y, size_t k) {
  for (size_t i = 0; i < k; ++i) y[i] = std::bit_cast<float>(static_cast<uint32_t>(x[i]) << 16);
}

}  // namespace qmm
