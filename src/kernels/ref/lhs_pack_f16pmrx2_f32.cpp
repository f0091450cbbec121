#include "kernels/ref/lhs_pack_f16pmrx2_f32.h"

#include <cstring>

#include "core/fp16.h"
#include "kernels/ref/layouts.h"

namespace qmm {
namespace {

constexpr size_t kPair = 2;  // kr / sr: the F16 values of a row held together

size_t panel_bytes(size_t mr, size_t k) { return mr * layout::round_up(k, kPair) * 2; }

size_t packed_size(size_t m, size_t k, size_t mr, size_t, size_t) { return (m + mr - 1) / mr * panel_bytes(mr, k); }

size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t, size_t) { return m_idx / mr * panel_bytes(mr, k); }

uint16_t f16_or_nan(float x) {
  const uint16_t h = fp32_to_fp16(x);
  return fp16_is_finite(h) ? h : kFp16NaN;
}

void run(size_t m, size_t k, size_t mr, size_t, size_t, const float* lhs, size_t stride, void* out) {
  std::memset(out, 0, packed_size(m, k, mr, 0, 0));  // rows beyond m read as zero
  const size_t pb = panel_bytes(mr, k);
  for (size_t r = 0; r < m; ++r) {
    const auto* in = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + r * stride);
    auto* panel = reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(out) + r / mr * pb);
    for (size_t c = 0; c < k; ++c) panel[layout::panel_index(mr, kPair, r % mr, c)] = f16_or_nan(in[c]);
  }
}

}  // namespace

const LhsPacker lhs_pack_f16pmrx2_f32 = {
    "lhs_pack_f16pmrx2_f32", packed_size, packed_offset, run, nullptr, LhsChunk::kr_over_sr, false};

}  // namespace qmm
