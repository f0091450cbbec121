#include "kernels/arm/lhs_pack_f16pmrx2_f32_neon.h"

#include <arm_neon.h>

#include <cstring>

#include "core/fp16.h"
#include "kernels/ref/lhs_pack_f16pmrx2_f32.h"

namespace qmm {
namespace {

size_t packed_size(size_t m, size_t k, size_t mr, size_t kr, size_t sr) {
  return lhs_pack_f16pmrx2_f32.packed_size(m, k, mr, kr, sr);
}
size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t kr, size_t sr) {
  return lhs_pack_f16pmrx2_f32.packed_offset(m_idx, k, mr, kr, sr);
}

uint16_t f16_or_nan(float x) {  // the reference's rule, for the tail
  const uint16_t h = fp32_to_fp16(x);
  return fp16_is_finite(h) ? h : kFp16NaN;
}

void run(size_t m, size_t k, size_t mr, size_t, size_t, const float* lhs, size_t stride, void* out) {
  const size_t pairs = (k + 1) / 2, panel_words = mr * pairs;  // a panel is mr·pairs 32-bit F16 pairs
  auto* words = static_cast<uint32_t*>(out);
  // Rows beyond m in the last panel read as zero (the driver's scratch is not zeroed per call).
  for (size_t r = m; r % mr != 0; ++r) {
    uint32_t* w = words + r / mr * panel_words + r % mr;
    for (size_t p = 0; p < pairs; ++p) w[p * mr] = 0;
  }
  const uint16x8_t exp_mask = vdupq_n_u16(0x7c00), nan = vdupq_n_u16(kFp16NaN);
  for (size_t r = 0; r < m; ++r) {
    const auto* in = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + r * stride);
    uint32_t* w = words + r / mr * panel_words + r % mr;  // pair p of the row at w[p·mr]
    size_t c = 0;
    for (; c + 8 <= k; c += 8, w += 4 * mr) {
      const float16x8_t h = vcombine_f16(vcvt_f16_f32(vld1q_f32(in + c)), vcvt_f16_f32(vld1q_f32(in + c + 4)));
      uint16x8_t u = vreinterpretq_u16_f16(h);
      u = vbslq_u16(vceqq_u16(vandq_u16(u, exp_mask), exp_mask), nan, u);
      const uint32x4_t p = vreinterpretq_u32_u16(u);
      vst1q_lane_u32(w, p, 0);
      vst1q_lane_u32(w + mr, p, 1);
      vst1q_lane_u32(w + 2 * mr, p, 2);
      vst1q_lane_u32(w + 3 * mr, p, 3);
    }
    for (; c < k; c += 2, w += mr) {  // the last values (k not a multiple of 8), an odd one padded with zero
      const uint32_t lo = f16_or_nan(in[c]), hi = c + 1 < k ? f16_or_nan(in[c + 1]) : 0;
      *w = lo | hi << 16;
    }
  }
}

}  // namespace

const LhsPacker lhs_pack_f16pmrx2_f32_neon = {"lhs_pack_f16pmrx2_f32_neon", packed_size,          packed_offset, run,
                                              &lhs_pack_f16pmrx2_f32,       LhsChunk::kr_over_sr, false};

}  // namespace qmm
