#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"

#include <cmath>
#include <cstring>

#include "kernels/ref/layouts.h"

namespace qmm {

float quantize_block_qsi8d32(const float* x, int8_t* q) {
  float amax = 0.0f;
  for (size_t j = 0; j < kBlock; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const float scale = amax / 127.0f;
  if (!block_is_finite(x) || !fp16_is_finite(fp32_to_fp16(scale))) {  // the NaN policy (ukernel.h)
    std::memset(q, 0, kBlock);
    return NAN;
  }
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  for (size_t j = 0; j < kBlock; ++j) q[j] = static_cast<int8_t>(std::roundf(x[j] * inv));
  return scale;
}

namespace {

size_t packed_size(size_t m, size_t k, size_t mr, size_t, size_t) {
  return (m + mr - 1) / mr * layout::qsi8d32p_panel_bytes(mr, k);
}

size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t, size_t) {
  return m_idx / mr * layout::qsi8d32p_panel_bytes(mr, k);
}

void run(size_t m, size_t k, size_t mr, size_t kr, size_t, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t panel_bytes = layout::qsi8d32p_panel_bytes(mr, k);
  const size_t blocks = k / kBlock;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel_bytes) {
    std::memset(out, 0, panel_bytes);
    for (size_t r = 0; r < mr && p0 + r < m; ++r) {
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      for (size_t b = 0; b < blocks; ++b) {
        int8_t q[kBlock];
        const uint16_t s = fp32_to_fp16(quantize_block_qsi8d32(row + b * kBlock, q));
        for (size_t j = 0; j < kBlock; ++j) {
          out[layout::panel_index(mr, kr, r, b * kBlock + j)] = static_cast<uint8_t>(q[j]);
        }
        std::memcpy(out + mr * k + (b * mr + r) * 2, &s, 2);
      }
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_qsi8d32p_f32 = {"lhs_quant_pack_qsi8d32p_f32", packed_size, packed_offset, run};

}  // namespace qmm
