#include "kernels/ref/lhs_quant_pack_qsi8d32pscalef16_f32.h"

#include <cstring>

#include "kernels/ref/layouts.h"
#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"

namespace qmm {
namespace {

size_t packed_size(size_t m, size_t k, size_t mr, size_t, size_t) {
  return (m + mr - 1) / mr * layout::qsi8d32pscalef16_panel_bytes(mr, k);
}

size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t, size_t) {
  return m_idx / mr * layout::qsi8d32pscalef16_panel_bytes(mr, k);
}

void run(size_t m, size_t k, size_t mr, size_t kr, size_t sr, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t panel_bytes = layout::qsi8d32pscalef16_panel_bytes(mr, k);
  const size_t block_bytes = mr * (kBlock + 2);
  const size_t kc = kr / sr;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel_bytes) {
    std::memset(out, 0, panel_bytes);
    for (size_t r = 0; r < mr && p0 + r < m; ++r) {
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      for (size_t b = 0; b < k / kBlock; ++b) {
        uint8_t* blk = out + b * block_bytes;
        int8_t q[kBlock];
        const uint16_t s = fp32_to_fp16(quantize_block_qsi8d32(row + b * kBlock, q));
        std::memcpy(blk + r * 2, &s, 2);
        for (size_t j = 0; j < kBlock; ++j) {
          blk[mr * 2 + (j / kc) * mr * kc + r * kc + j % kc] = static_cast<uint8_t>(q[j]);
        }
      }
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_qsi8d32pscalef16_f32 = {"lhs_quant_pack_qsi8d32pscalef16_f32", packed_size,
                                                       packed_offset, run, nullptr, LhsChunk::kr_over_sr};

}  // namespace qmm
