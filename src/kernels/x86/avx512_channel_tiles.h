// The AVX-512 VNNI tile loop of the per-channel kernels (qai8dxp LHS × qsi8cxp / qsi4cxp RHS,
// kernels/ref/layouts_c.h), written once over the weight format W, which supplies
//   static __m512i load(const uint8_t* panel, size_t kk): the 64 int8 weights of K columns
//     kk..kk+3 of a 16-row panel, row r at bytes 4r..4r+3;
//   data_bytes(nr, k), panel_bytes(nr, k).
// Signed activations are made unsigned by XOR 0x80 (a + 128) for vpdpbusd; the epilogue folds
// -128·Σw with the zero point: isum = Σ (a+128)·w + (-zp - 128)·Σw (int32: exact while
// k < 2^16; the reference sums in int64), then float(isum) · (s_a · s_w) + bias, unfused, and
// the NaN-propagating clamp: the reference's bits (kernels/ref/scalar_channel.h).
// Internal linkage: only AVX-512 VNNI files include this.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/ref/layouts_c.h"

namespace qmm::avx512ch {
namespace {

constexpr size_t kNr = 16, kKr = 4;

int32_t load_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Rows 0..MR-1 of one LHS panel (m valid) x C 16-column RHS panels `rpanel` bytes apart (n valid
// columns in all): MR·C independent accumulators, each weight load serving MR rows.
template <class W, size_t MR, size_t C>
void tile(size_t m, size_t n, size_t k, const uint8_t* lp, const uint8_t* rp, size_t rpanel, float* dst, size_t stride,
          __m512 vlo, __m512 vhi) {
  const size_t kp = layout::kc_padded(k);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i acc[C][MR];
  for (size_t c = 0; c < C; ++c)
    for (size_t r = 0; r < MR; ++r) acc[c][r] = _mm512_setzero_si512();
  for (size_t kk = 0; kk < kp; kk += kKr) {
    __m512i w[C];
    for (size_t c = 0; c < C; ++c) w[c] = W::load(rp + c * rpanel, kk);
    const uint8_t* a = lp + kk * MR;
    for (size_t r = 0; r < MR; ++r) {
      const __m512i av = _mm512_xor_si512(_mm512_set1_epi32(load_i32(a + r * kKr)), flip);
      for (size_t c = 0; c < C; ++c) acc[c][r] = _mm512_dpbusd_epi32(acc[c][r], av, w[c]);
    }
  }
  for (size_t c = 0; c < C && c * kNr < n; ++c) {
    const uint8_t* tail = rp + c * rpanel + W::data_bytes(kNr, k);
    const __m512i sums = _mm512_loadu_si512(tail);
    const __m512 sw = _mm512_loadu_ps(tail + kNr * 4), bias = _mm512_loadu_ps(tail + 2 * kNr * 4);
    const __mmask16 mask = static_cast<__mmask16>((1u << std::min(kNr, n - c * kNr)) - 1);
    for (size_t r = 0; r < MR && r < m; ++r) {
      const int32_t zp_fold = layout::qai8dxp_neg_zero_point(lp, MR, k, r) - 128;
      const __m512i isum = _mm512_add_epi32(acc[c][r], _mm512_mullo_epi32(sums, _mm512_set1_epi32(zp_fold)));
      const __m512 s = _mm512_mul_ps(_mm512_set1_ps(layout::qai8dxp_scale(lp, MR, k, r)), sw);
      const __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(isum), s), bias);
      float* d = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + r * stride) + c * kNr;
      _mm512_mask_storeu_ps(d, mask, _mm512_min_ps(vhi, _mm512_max_ps(vlo, v)));
    }
  }
}

template <class W, size_t MR>
void run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  constexpr size_t kC = MR == 1 ? 4 : 2;  // panels per tile: 8 or 16 accumulators
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const size_t lpanel = layout::qai8dxp_panel_bytes(MR, k), rpanel = W::panel_bytes(kNr, k);
  for (size_t i = 0; i < m; i += MR) {
    const auto* lp = static_cast<const uint8_t*>(lhs) + i / MR * lpanel;
    float* row = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride);
    size_t j = 0;
    for (; j + kC * kNr <= n; j += kC * kNr) {
      tile<W, MR, kC>(m - i, kC * kNr, k, lp, static_cast<const uint8_t*>(rhs) + j / kNr * rpanel, rpanel, row + j, stride, vlo, vhi);
    }
    for (; j < n; j += kNr) {
      tile<W, MR, 1>(m - i, std::min(kNr, n - j), k, lp, static_cast<const uint8_t*>(rhs) + j / kNr * rpanel, rpanel, row + j,
                  stride, vlo, vhi);
    }
  }
}

}  // namespace
}  // namespace qmm::avx512ch
