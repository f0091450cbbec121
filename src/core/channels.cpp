#include "core/channels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace qmm {
namespace {

// amax / qmax, or NaN when the row is not finite (the NaN policy).
float channel_scale_of(const float* x, size_t k, float qmax) {
  float amax = 0.0f;
  bool finite = true;
  for (size_t c = 0; c < k; ++c) {
    finite &= x[c] - x[c] == 0.0f;
    amax = std::max(amax, std::fabs(x[c]));
  }
  const float scale = amax / qmax;
  return finite && std::isfinite(scale) ? scale : NAN;
}

void put_header(uint8_t* row, float scale, float bias) {
  std::memcpy(row, &scale, 4);
  std::memcpy(row + 4, &bias, 4);
}

// round(x / scale) clamped to [lo, hi]; 0 for a zero or NaN scale.
int quantize_value(float x, float scale, int lo, int hi) {
  if (!(scale > 0.0f)) return 0;
  return std::clamp(static_cast<int>(std::round(x * (1.0f / scale))), lo, hi);
}

}  // namespace

size_t qc8_row_bytes(size_t k) { return kChannelHeader + k; }
size_t qc4_row_bytes(size_t k) { return kChannelHeader + (k + 1) / 2; }

float channel_scale(const uint8_t* row) {
  float v;
  std::memcpy(&v, row, 4);
  return v;
}

float channel_bias(const uint8_t* row) {
  float v;
  std::memcpy(&v, row + 4, 4);
  return v;
}

int qc8_value(const uint8_t* row, size_t c) { return static_cast<int8_t>(row[kChannelHeader + c]); }

int qc4_value(const uint8_t* row, size_t c) {
  const int nibble = (row[kChannelHeader + c / 2] >> (4 * (c % 2))) & 0xf;
  return nibble >= 8 ? nibble - 16 : nibble;
}

void quantize_row_qc8(const float* x, float bias, uint8_t* row, size_t k) {
  const float scale = channel_scale_of(x, k, 127.0f);
  put_header(row, scale, bias);
  for (size_t c = 0; c < k; ++c) row[kChannelHeader + c] = static_cast<uint8_t>(quantize_value(x[c], scale, -127, 127));
}

void quantize_row_qc4(const float* x, float bias, uint8_t* row, size_t k) {
  const float scale = channel_scale_of(x, k, 7.0f);
  put_header(row, scale, bias);
  std::memset(row + kChannelHeader, 0, (k + 1) / 2);
  for (size_t c = 0; c < k; ++c) {
    const auto nibble = static_cast<uint8_t>(quantize_value(x[c], scale, -8, 7) & 0xf);
    row[kChannelHeader + c / 2] |= static_cast<uint8_t>(nibble << (4 * (c % 2)));
  }
}

void dequantize_row_qc8(const uint8_t* row, float* y, size_t k) {
  const float scale = channel_scale(row);
  for (size_t c = 0; c < k; ++c) y[c] = static_cast<float>(qc8_value(row, c)) * scale;
}

void dequantize_row_qc4(const uint8_t* row, float* y, size_t k) {
  const float scale = channel_scale(row);
  for (size_t c = 0; c < k; ++c) y[c] = static_cast<float>(qc4_value(row, c)) * scale;
}

}  // namespace qmm
