#include "kernels/x86/lhs_quant_pack_qai8dxp_f32_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cfloat>
#include <cstring>

#include "kernels/ref/layouts_c.h"
#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"

namespace qmm {
namespace {

float hmin(__m256 v) {
  alignas(32) float t[8];
  _mm256_store_ps(t, v);
  return *std::min_element(t, t + 8);
}
float hmax(__m256 v) {
  alignas(32) float t[8];
  _mm256_store_ps(t, v);
  return *std::max_element(t, t + 8);
}

Qai8dxpRowQuant row_quant(const float* x, size_t k) {
  __m256 lo = _mm256_set1_ps(FLT_MAX), hi = _mm256_set1_ps(-FLT_MAX), bad = _mm256_setzero_ps();
  size_t c = 0;
  for (; c + 8 <= k; c += 8) {
    const __m256 v = _mm256_loadu_ps(x + c);
    lo = _mm256_min_ps(lo, v);
    hi = _mm256_max_ps(hi, v);
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(_mm256_sub_ps(v, v), _mm256_setzero_ps(), _CMP_NEQ_UQ));  // NaN or ±Inf
  }
  float l = hmin(lo), h = hmax(hi);
  bool finite = _mm256_movemask_ps(bad) == 0;
  for (; c < k; ++c) {
    finite &= x[c] - x[c] == 0.0f;
    l = std::min(l, x[c]);
    h = std::max(h, x[c]);
  }
  return qai8dxp_row_quant(l, h, finite);
}

// roundf(v · mul) + zp for 8 values, as int32 (|v · mul| <= 255: exact in float).
__m256i quantize8(__m256 v, __m256 mul, __m256i zp) {
  const __m256 p = _mm256_mul_ps(v, mul);
  const __m256 t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 frac = _mm256_andnot_ps(sign, _mm256_sub_ps(p, t));
  const __m256 step = _mm256_or_ps(_mm256_and_ps(p, sign), _mm256_set1_ps(1.0f));  // ±1
  const __m256 r = _mm256_add_ps(t, _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ), step));
  return _mm256_add_epi32(_mm256_cvtps_epi32(r), zp);
}

// 32 values -> 32 int8, clamped to [-128, 127], in order.
void quantize32(const float* v, __m256 mul, __m256i zp, int8_t* q) {
  const __m256i a = _mm256_packs_epi32(quantize8(_mm256_loadu_ps(v), mul, zp), quantize8(_mm256_loadu_ps(v + 8), mul, zp));
  const __m256i b = _mm256_packs_epi32(quantize8(_mm256_loadu_ps(v + 16), mul, zp), quantize8(_mm256_loadu_ps(v + 24), mul, zp));
  const __m256i packed = _mm256_packs_epi16(a, b);  // 4-byte groups of the inputs 0, 8, 16, 24, 4, 12, 20, 28
  const __m256i ordered = _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), ordered);
}


void run(size_t m, size_t k, size_t mr, size_t kr, size_t sr, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t panel_bytes = layout::qai8dxp_panel_bytes(mr, k), kp = layout::kc_padded(k), kc = kr / sr;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel_bytes) {
    std::memset(out, 0, panel_bytes);
    for (size_t r = 0; r < mr && p0 + r < m; ++r) {
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      const Qai8dxpRowQuant q = row_quant(row, k);
      if (q.mul != 0.0f) {
        const __m256 mul = _mm256_set1_ps(q.mul);
        const __m256i zp = _mm256_set1_epi32(q.zero_point);
        for (size_t c0 = 0; c0 < kp; c0 += 32) {
          float tail[32];
          const float* v = row + c0;
          if (c0 + 32 > k) {  // columns k..K-1 repeat column k - 1
            for (size_t j = 0; j < 32; ++j) tail[j] = row[std::min(c0 + j, k - 1)];
            v = tail;
          }
          int8_t qs[32];
          quantize32(v, mul, zp, qs);
          for (size_t j = 0; j < 32; j += kc) std::memcpy(out + layout::panel_index(mr, kc, r, c0 + j), qs + j, kc);
        }
      }
      const int32_t neg_zp = -q.zero_point;
      std::memcpy(out + mr * kp + r * 4, &neg_zp, 4);
      std::memcpy(out + mr * (kp + 4) + r * 4, &q.scale, 4);
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_qai8dxp_f32_avx2 = {"lhs_quant_pack_qai8dxp_f32_avx2", qai8dxp_packed_size,
                                                  qai8dxp_packed_offset, run,
                                                  &lhs_quant_pack_qai8dxp_f32, LhsChunk::kr_over_sr};

}  // namespace qmm
