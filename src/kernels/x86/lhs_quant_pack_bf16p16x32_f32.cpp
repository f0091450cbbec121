#include "kernels/x86/lhs_quant_pack_bf16p16x32_f32.h"

#include <cstdint>
#include <cstring>

#include "core/blocks.h"

namespace qmm {

namespace bf16p {
size_t packed_size(size_t m, size_t k, size_t mr, size_t, size_t) { return (m + mr - 1) / mr * panel_bytes(mr, k); }
size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t, size_t) { return m_idx / mr * panel_bytes(mr, k); }
}  // namespace bf16p

namespace {

void run_ref(size_t m, size_t k, size_t mr, size_t, size_t, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t panel = bf16p::panel_bytes(mr, k);
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel) {
    std::memset(out, 0, panel);
    for (size_t r = 0; r < mr && p0 + r < m; ++r) {
      const auto* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      for (size_t c = 0; c < k; ++c) {
        const uint16_t h = bf16p::bf16_from_f32(row[c]);
        std::memcpy(out + c / kBlock * mr * 64 + 64 * r + 2 * (c % kBlock), &h, 2);
      }
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_bf16p16x32_f32_ref = {"lhs_quant_pack_bf16p16x32_f32_ref", bf16p::packed_size,
                                                      bf16p::packed_offset, run_ref, nullptr,
                                                      LhsChunk::block, false};

}  // namespace qmm
