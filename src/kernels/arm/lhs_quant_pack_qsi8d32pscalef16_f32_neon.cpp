#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"

#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "core/fp16.h"
#include "kernels/ref/lhs_quant_pack_qsi8d32pscalef16_f32.h"

namespace qmm {
namespace {

size_t panel_bytes(size_t mr, size_t k) { return mr * (k / kBlock) * (kBlock + 2); }

size_t packed_size(size_t m, size_t k, size_t mr, size_t, size_t) { return (m + mr - 1) / mr * panel_bytes(mr, k); }

size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t, size_t) { return m_idx / mr * panel_bytes(mr, k); }

// One 32-block: q[j] = roundf(x[j] / scale) as int8, returns scale = amax / 127 (as the reference).
// FMAX, not FMAXNM: a NaN anywhere makes amax NaN, and a block whose scale is not a finite f16
// returns NaN with zero quants (the NaN policy, kernels/ukernel.h).
float quantize_block(const float* x, int8_t* q) {
  float32x4_t v[8];
  for (size_t i = 0; i < 8; ++i) v[i] = vld1q_f32(x + 4 * i);
  float32x4_t m0 = vmaxq_f32(vabsq_f32(v[0]), vabsq_f32(v[1])), m1 = vmaxq_f32(vabsq_f32(v[2]), vabsq_f32(v[3]));
  float32x4_t m2 = vmaxq_f32(vabsq_f32(v[4]), vabsq_f32(v[5])), m3 = vmaxq_f32(vabsq_f32(v[6]), vabsq_f32(v[7]));
  const float amax = vmaxvq_f32(vmaxq_f32(vmaxq_f32(m0, m1), vmaxq_f32(m2, m3)));
  const float scale = amax / 127.0f;
  if (!fp16_is_finite(fp32_to_fp16(scale))) {
    std::memset(q, 0, kBlock);
    return NAN;
  }
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  for (size_t i = 0; i < 8; i += 2) {
    const int32x4_t a = vcvtaq_s32_f32(vmulq_n_f32(v[i], inv)), b = vcvtaq_s32_f32(vmulq_n_f32(v[i + 1], inv));
    const int16x8_t ab = vcombine_s16(vmovn_s32(a), vmovn_s32(b));
    vst1_s8(q + 4 * i, vmovn_s16(ab));
  }
  return scale;
}

void run(size_t m, size_t k, size_t mr, size_t kr, size_t sr, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t pb = panel_bytes(mr, k);
  const size_t block_bytes = mr * (kBlock + 2);
  const size_t kc = kr / sr;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += pb) {
    const size_t rows = m - p0 < mr ? m - p0 : mr;
    if (rows < mr) std::memset(out, 0, pb);  // padding rows of the last panel read as zero
    for (size_t r = 0; r < rows; ++r) {
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      for (size_t b = 0; b < k / kBlock; ++b) {
        uint8_t* blk = out + b * block_bytes;
        int8_t q[kBlock];
        const uint16_t s = fp32_to_fp16(quantize_block(row + b * kBlock, q));
        std::memcpy(blk + r * 2, &s, 2);
        for (size_t j = 0; j < kBlock; j += kc) std::memcpy(blk + mr * 2 + (j / kc) * mr * kc + r * kc, q + j, kc);
      }
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_qsi8d32pscalef16_f32_neon = {"lhs_quant_pack_qsi8d32pscalef16_f32_neon", packed_size,
                                                            packed_offset, run, &lhs_quant_pack_qsi8d32pscalef16_f32,
                                                            LhsChunk::kr_over_sr};

}  // namespace qmm
