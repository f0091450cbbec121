#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/ref/layouts_c.h"

namespace qmm {
namespace {

struct RowQuant {
  float scale;       // dequantization step, NaN for a poisoned row
  int32_t zero_point;
};

RowQuant row_quant(const float* x, size_t k) {
  float lo = 0.0f, hi = 0.0f;
  bool finite = true;
  for (size_t c = 0; c < k; ++c) {
    finite &= x[c] - x[c] == 0.0f;
    lo = std::min(lo, x[c]);
    hi = std::max(hi, x[c]);
  }
  const float range = hi - lo;
  if (!finite || !std::isfinite(range)) return {NAN, 0};
  if (range == 0.0f) return {0.0f, 0};
  const float inv = 255.0f / range;
  // The zero point that maps lo to -128 or hi to 127, whichever errs less, rounded.
  const float from_lo = -128.0f - lo * inv, from_hi = 127.0f - hi * inv;
  const float zp = (-128.0f + lo * inv) + (127.0f + hi * inv) > 0.0f ? from_lo : from_hi;
  return {range / 255.0f, static_cast<int32_t>(std::round(std::clamp(zp, -128.0f, 127.0f)))};
}

size_t packed_size(size_t m, size_t k, size_t mr, size_t, size_t) {
  return (m + mr - 1) / mr * layout::qai8dxp_panel_bytes(mr, k);
}

size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t, size_t) {
  return m_idx / mr * layout::qai8dxp_panel_bytes(mr, k);
}

void run(size_t m, size_t k, size_t mr, size_t kr, size_t sr, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t panel_bytes = layout::qai8dxp_panel_bytes(mr, k), kp = layout::kc_padded(k), kc = kr / sr;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel_bytes) {
    std::memset(out, 0, panel_bytes);
    for (size_t r = 0; r < mr && p0 + r < m; ++r) {
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      const RowQuant q = row_quant(row, k);
      const float inv = q.scale > 0.0f ? 1.0f / q.scale : 0.0f;  // 0 for a zero or NaN scale
      for (size_t c = 0; c < k; ++c) {
        const int v = inv != 0.0f ? static_cast<int>(std::round(row[c] * inv)) + q.zero_point : q.zero_point;
        out[layout::panel_index(mr, kc, r, c)] = static_cast<uint8_t>(std::clamp(v, -128, 127));
      }
      const int32_t neg_zp = -q.zero_point;
      std::memcpy(out + mr * kp + r * 4, &neg_zp, 4);
      std::memcpy(out + mr * (kp + 4) + r * 4, &q.scale, 4);
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_qai8dxp_f32 = {"lhs_quant_pack_qai8dxp_f32", packed_size, packed_offset, run};

}  // namespace qmm
