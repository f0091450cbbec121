#include "core/blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <strings.h>

#include "core/channels.h"
#include "core/fp16.h"
#include "core/kquants.h"

namespace qmm {

const char* type_name(WeightType t) {
  switch (t) {
    case WeightType::f32: return "f32";
    case WeightType::f16: return "f16";
    case WeightType::q4_0: return "q4_0";
    case WeightType::q8_0: return "q8_0";
    case WeightType::q4_k: return "q4_k";
    case WeightType::q5_k: return "q5_k";
    case WeightType::q6_k: return "q6_k";
    case WeightType::iq4_nl: return "iq4_nl";
    case WeightType::qc8: return "qc8";
    case WeightType::qc4: return "qc4";
  }
  return "?";
}

bool parse_type(const char* name, WeightType* out) {
  for (WeightType t : kWeightTypes) {
    if (strcasecmp(name, type_name(t)) == 0) {
      *out = t;
      return true;
    }
  }
  return false;
}

bool is_block_type(WeightType t) { return block_len(t) > 1; }

bool is_channel_type(WeightType t) { return t == WeightType::qc8 || t == WeightType::qc4; }

size_t block_len(WeightType t) {
  switch (t) {
    case WeightType::f32: case WeightType::f16: case WeightType::qc8: case WeightType::qc4: return 1;
    case WeightType::q4_0: case WeightType::q8_0: case WeightType::iq4_nl: return kBlock;
    case WeightType::q4_k: case WeightType::q5_k: case WeightType::q6_k: return kSuperBlock;
  }
  return 1;
}

size_t row_bytes(WeightType t, size_t k) {
  switch (t) {
    case WeightType::f32: return k * 4;
    case WeightType::f16: return k * 2;
    case WeightType::q4_0: return k / kBlock * sizeof(BlockQ4_0);
    case WeightType::q8_0: return k / kBlock * sizeof(BlockQ8_0);
    case WeightType::q4_k: return k / kSuperBlock * sizeof(BlockQ4_K);
    case WeightType::q5_k: return k / kSuperBlock * sizeof(BlockQ5_K);
    case WeightType::q6_k: return k / kSuperBlock * sizeof(BlockQ6_K);
    case WeightType::iq4_nl: return k / kBlock * sizeof(BlockIQ4_NL);
    case WeightType::qc8: return qc8_row_bytes(k);
    case WeightType::qc4: return qc4_row_bytes(k);
  }
  return 0;
}

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

void dequantize_row(WeightType t, const void* row, float* y, size_t k) {
  switch (t) {
    case WeightType::f32: std::memcpy(y, row, k * 4); break;
    case WeightType::f16: fp16_to_fp32_row(static_cast<const uint16_t*>(row), y, k); break;
    case WeightType::q4_0: dequantize_row_q4_0(static_cast<const BlockQ4_0*>(row), y, k); break;
    case WeightType::q8_0: dequantize_row_q8_0(static_cast<const BlockQ8_0*>(row), y, k); break;
    case WeightType::q4_k: dequantize_row_q4_k(static_cast<const BlockQ4_K*>(row), y, k); break;
    case WeightType::q5_k: dequantize_row_q5_k(static_cast<const BlockQ5_K*>(row), y, k); break;
    case WeightType::q6_k: dequantize_row_q6_k(static_cast<const BlockQ6_K*>(row), y, k); break;
    case WeightType::iq4_nl: dequantize_row_iq4_nl(static_cast<const BlockIQ4_NL*>(row), y, k); break;
    case WeightType::qc8: dequantize_row_qc8(static_cast<const uint8_t*>(row), y, k); break;
    case WeightType::qc4: dequantize_row_qc4(static_cast<const uint8_t*>(row), y, k); break;
  }
}

void quantize_rows(WeightType t, const float* x, void* y, size_t n, size_t k) {
  auto* out = static_cast<uint8_t*>(y);
  const size_t rb = row_bytes(t, k);
  for (size_t i = 0; i < n; ++i, x += k, out += rb) {
    switch (t) {
      case WeightType::f32: std::memcpy(out, x, k * 4); break;
      case WeightType::f16: fp32_to_fp16_row(x, reinterpret_cast<uint16_t*>(out), k); break;
      case WeightType::q4_0: quantize_row_q4_0(x, reinterpret_cast<BlockQ4_0*>(out), k); break;
      case WeightType::q8_0: quantize_row_q8_0(x, reinterpret_cast<BlockQ8_0*>(out), k); break;
      case WeightType::q4_k: quantize_row_q4_k(x, reinterpret_cast<BlockQ4_K*>(out), k); break;
      case WeightType::q5_k: quantize_row_q5_k(x, reinterpret_cast<BlockQ5_K*>(out), k); break;
      case WeightType::q6_k: quantize_row_q6_k(x, reinterpret_cast<BlockQ6_K*>(out), k); break;
      case WeightType::iq4_nl: quantize_row_iq4_nl(x, reinterpret_cast<BlockIQ4_NL*>(out), k); break;
      case WeightType::qc8: quantize_row_qc8(x, 0.0f, out, k); break;  // bias 0
      case WeightType::qc4: quantize_row_qc4(x, 0.0f, out, k); break;
    }
  }
}

}  // namespace qmm
