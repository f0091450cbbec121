#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"

#include <algorithm>
#include <cmath>
#include <cfloat>
#include <cstring>

#include "kernels/ref/layouts_c.h"

namespace qmm {

size_t qai8dxp_packed_size(size_t m, size_t k, size_t mr, size_t, size_t) {
  return (m + mr - 1) / mr * layout::qai8dxp_panel_bytes(mr, k);
}

size_t qai8dxp_packed_offset(size_t m_idx, size_t k, size_t mr, size_t, size_t) {
  return m_idx / mr * layout::qai8dxp_panel_bytes(mr, k);
}

namespace {

Qai8dxpRowQuant row_quant(const float* x, size_t k) {
  float lo = FLT_MAX, hi = -FLT_MAX;
  bool finite = true;
  for (size_t c = 0; c < k; ++c) {
    finite &= x[c] - x[c] == 0.0f;
    lo = std::min(lo, x[c]);
    hi = std::max(hi, x[c]);
  }
  return qai8dxp_row_quant(lo, hi, finite);
}


void run(size_t m, size_t k, size_t mr, size_t kr, size_t sr, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t panel_bytes = layout::qai8dxp_panel_bytes(mr, k), kp = layout::kc_padded(k), kc = kr / sr;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel_bytes) {
    std::memset(out, 0, panel_bytes);
    for (size_t r = 0; r < mr && p0 + r < m; ++r) {
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      const Qai8dxpRowQuant q = row_quant(row, k);
      // Columns k..K-1 repeat column k - 1 (KleidiAI's padding).
      for (size_t c = 0; c < kp; ++c) {
        const float v = row[c < k ? c : k - 1];
        const int iq = q.mul != 0.0f ? static_cast<int>(std::roundf(v * q.mul)) + q.zero_point : 0;
        out[layout::panel_index(mr, kc, r, c)] = static_cast<uint8_t>(std::clamp(iq, -128, 127));
      }
      const int32_t neg_zp = -q.zero_point;
      std::memcpy(out + mr * kp + r * 4, &neg_zp, 4);
      std::memcpy(out + mr * (kp + 4) + r * 4, &q.scale, 4);
    }
  }
}

}  // namespace

// KleidiAI's arithmetic, operation for operation: `mul` = 255 / (max - min) quantizes (q =
// roundf(x·mul) + zp), the stored scale is 1 / mul, the zero point is rintf'd (ties to even).
Qai8dxpRowQuant qai8dxp_row_quant(float lo, float hi, bool finite) {
  const float rmin = std::min(0.0f, lo), rmax = std::max(0.0f, hi);
  if (!finite || !std::isfinite(rmax - rmin)) return {0.0f, NAN, 0};
  float mul = rmin == rmax ? 1.0f : 255.0f / (rmax - rmin);
  // A range below 255/FLT_MAX: KleidiAI's multiplier overflows to Inf (and its output is
  // undefined); qmm treats the row as zero (an error below 1e-36 per weight).
  if (!std::isfinite(mul)) mul = 1.0f;
  const float dmin = rmin * mul, dmax = rmax * mul;
  float zp = (-128.0f + dmin) + (127.0f + dmax) > 0.0f ? -128.0f - dmin : 127.0f - dmax;
  zp = std::min(std::max(zp, -128.0f), 127.0f);
  return {mul, 1.0f / mul, static_cast<int32_t>(std::nearbyint(zp))};
}

const LhsPacker lhs_quant_pack_qai8dxp_f32 = {"lhs_quant_pack_qai8dxp_f32", qai8dxp_packed_size, qai8dxp_packed_offset,
                                             run, nullptr, LhsChunk::kr_over_sr};

}  // namespace qmm
