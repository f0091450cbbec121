#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"

#include <cstdint>
#include <cstring>

#include "core/fp16.h"
#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"

namespace qmm {

namespace x86lhs {
size_t packed_size(size_t m, size_t k, size_t mr, size_t, size_t) { return (m + mr - 1) / mr * panel_bytes(mr, k); }
size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t, size_t) { return m_idx / mr * panel_bytes(mr, k); }
}  // namespace x86lhs

namespace {

// kChunk: the K chunk the rows interleave by (4: ..._sum; 32, a whole block: ..._sumrows).
template <size_t kChunk>
void run_ref(size_t m, size_t k, size_t mr, size_t, size_t, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t blocks = k / kBlock;
  const size_t panel = x86lhs::panel_bytes(mr, k);
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel) {
    std::memset(out, 0, panel);
    for (size_t r = 0; r < mr && p0 + r < m; ++r) {
      const auto* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      for (size_t b = 0; b < blocks; ++b) {
        uint8_t* blk = out + b * mr * x86lhs::kBlockBytes;
        int8_t q[kBlock];
        const float scale = fp16_to_fp32(fp32_to_fp16(quantize_block_qsi8d32(row + b * kBlock, q)));
        int32_t sum[2] = {0, 0};  // over j%4 < 2, j%4 >= 2
        for (size_t j = 0; j < kBlock; ++j) {
          blk[((j / kChunk) * mr + r) * kChunk + j % kChunk] = static_cast<uint8_t>(q[j]);
          sum[j % 4 / 2] += q[j];
        }
        const int16_t pair[2] = {static_cast<int16_t>(-8 * sum[0]), static_cast<int16_t>(-8 * sum[1])};
        std::memcpy(blk + 32 * mr + 4 * r, &scale, 4);
        std::memcpy(blk + 36 * mr + 4 * r, pair, 4);
      }
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_qsi8d32pscalef32sum_f32_ref = {
    "lhs_quant_pack_qsi8d32pscalef32sum_f32_ref", x86lhs::packed_size, x86lhs::packed_offset, run_ref<4>};
const LhsPacker lhs_quant_pack_qsi8d32pscalef32sumrows_f32_ref = {
    "lhs_quant_pack_qsi8d32pscalef32sumrows_f32_ref", x86lhs::packed_size, x86lhs::packed_offset, run_ref<kBlock>, nullptr,
    LhsChunk::block};

}  // namespace qmm
