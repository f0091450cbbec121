#include "llm/attention/attend_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/blocks.h"
#include "core/fp16.h"
#include "llm/attention/attend_kernel.h"
#include "llm/kv_type.h"

namespace qmm::llm {
namespace {

// q·k of one key row by attend_kernel.h's int8 definition (row: the cache row of a Q8_0 / Q4_0 key).
float int8_dot(const int8_t* qs, const float* qd, KvType t, const uint8_t* row, size_t hd) {
  const size_t bytes = t == KvType::q4_0 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  float s = 0;
  for (size_t b = 0; b < hd / kBlock; ++b) {
    const uint8_t* blk = row + b * bytes;
    uint16_t dh;
    std::memcpy(&dh, blk, sizeof dh);
    int32_t sum = 0;
    for (size_t i = 0; i < kBlock; ++i) {
      const int32_t k = t == KvType::q4_0 ? ((blk[2 + i % 16] >> (i < 16 ? 0 : 4)) & 0xf) - 8 : static_cast<int8_t>(blk[2 + i]);
      sum += int32_t{qs[b * kBlock + i]} * k;
    }
    s = std::fma(fp16_to_fp32(dh) * qd[b], static_cast<float>(sum), s);  // fused: the same bits in every build
  }
  return s;
}

}  // namespace

void attend_chunk_ref(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk, size_t pos0,
                      size_t rows, float scale, float softcap, float* scratch, float* part) {
  const FlushSubnormals flush;  // as every kernel (attend_kernel.h)
  const size_t c0 = chunk * kAttendChunk, end = pos0 + rows;
  const size_t n = c0 < end ? std::min(kAttendChunk, end - c0) : 0;
  float *kf = scratch, *vf = scratch + kAttendChunk * hd, *s = vf + kAttendChunk * hd;
  auto row_of = [&](size_t p) { return (kv.ring.start + c0 + p) % kv.ring.slots; };
  for (size_t p = 0; p < n; ++p) {
    kv_load(kv.k_type, kv.k + row_of(p) * kv.k_stride, kv.k_stride, 1, kf + p * hd, hd);
    kv_load(kv.v_type, kv.v + row_of(p) * kv.v_stride, kv.v_stride, 1, vf + p * hd, hd);
  }
  int8_t* qs = reinterpret_cast<int8_t*>(s + kAttendChunk);
  float* qd = s + kAttendChunk + hd / 4;
  const size_t ps = attend_partial_size(hd);
  for (size_t r = 0; r < rows; ++r) {
    const size_t len = pos0 + r + 1 > c0 ? std::min(n, pos0 + r + 1 - c0) : 0;
    for (size_t h = 0; h < heads; ++h) {
      const float* qh = q + r * q_stride + h * hd;
      float* out = part + (r * heads + h) * ps;
      if (attend_int8_keys(kv.k_type)) attend_quantize_query(qh, hd, qs, qd);
      float m = -INFINITY, l = 0;
      for (size_t p = 0; p < len; ++p) {
        float d = 0;
        if (attend_int8_keys(kv.k_type)) {
          d = int8_dot(qs, qd, kv.k_type, kv.k + row_of(p) * kv.k_stride, hd);
        } else {
          for (size_t i = 0; i < hd; ++i) d += qh[i] * kf[p * hd + i];
        }
        s[p] = d * scale;
        if (softcap > 0) s[p] = softcap * std::tanh(s[p] / softcap);
        m = std::max(m, s[p]);
      }
      float* o = out + 2;
      std::fill(o, o + hd, 0.0f);
      for (size_t p = 0; p < len; ++p) {
        const float e = std::exp(s[p] - m);
        l += e;
        for (size_t i = 0; i < hd; ++i) o[i] += e * vf[p * hd + i];
      }
      out[0] = m;
      out[1] = l;
    }
  }
}

}  // namespace qmm::llm
