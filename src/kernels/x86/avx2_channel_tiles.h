// The tile loop of the per-channel kernels (qai8dxp LHS × qsi8cxp / qsi4cxp RHS,
// kernels/ref/layouts_c.h) for AVX2, AVX-VNNI and the AVX-512 VNNI qc4 pair, written once over
// a dot policy D:
//   D::V: the vector traits of the epilogue (Ymm8 below: 8-row panels; kNr rows per panel);
//   D::Acc, D::zero(): the accumulators of one LHS row × one kNr-row RHS panel;
//   D::kStep: K columns per step (8 or 16; K is padded to 32);
//   D::W D::load_w(panel, kk), D::A D::load_a(lhs_panel, MR, r, kk): a step's operands;
//   D::dot(Acc&, A, W); D::finish(Acc) -> V::I: the kNr row sums in row order;
//   D::kFold (added to -zp) and D::kAsum (times the LHS row's Σq): the corrections of the
//   policy's unsigned operand: isum = acc + (-zp + kFold)·Σw + kAsum·Σa.
// Packing: nr = kNr, kr = 8, sr = 1 (each row's 8 K values contiguous, so one vpbroadcastq
// brings an LHS row's step). Epilogue as the reference (kernels/ref/scalar_channel.h):
// float(isum) · (s_a · s_w) + bias, unfused, then the NaN-propagating clamp. int32 sums are
// exact while k < 2^16 (what check_shape admits for these types).
// Internal linkage: AVX2 and AVX-VNNI files include this with different flags.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/ref/layouts_c.h"
#include "kernels/x86/avx2_util.h"

namespace qmm::avx2ch {
namespace {

constexpr size_t kKr = 8;

// The 8 bytes at p in every 64-bit lane.
inline __m256i broadcast8(const uint8_t* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return _mm256_set1_epi64x(v);
}

// The nibble planes of one 8-K step of a qsi4cxp panel as unsigned int8 w + 8: lo = the even,
// hi = the odd K columns, row r's four in bytes 4r..4r+3 (the GEMVs multiply them with the
// LHS row's even / odd values, so no byte interleave is needed).
inline void load_u4_planes(const uint8_t* panel, size_t kk, __m256i& lo, __m256i& hi) {
  const __m256i b = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 4)),
                                     _mm256_set1_epi8(static_cast<char>(0x88)));
  const __m256i mask = _mm256_set1_epi8(0x0f);
  lo = _mm256_and_si256(b, mask);
  hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), mask);
}

// The even / odd values of the 8 LHS bytes at p, each four in every 32-bit lane.
inline void broadcast_even_odd(const uint8_t* p, __m256i& even, __m256i& odd) {
  const __m256i q = broadcast8(p);
  even = _mm256_shuffle_epi8(q, _mm256_set1_epi32(0x06040200));
  odd = _mm256_shuffle_epi8(q, _mm256_set1_epi32(0x07050301));
}

// One 8-K step of a qsi4cxp panel (nr = 8, kr = 8: 32 bytes, row r in bytes 4r..4r+3, low
// nibble first) as unsigned int8 w + 8 (nibble ^ 8): lo = rows 0, 1 | 4, 5 and hi = rows
// 2, 3 | 6, 7, each row's 8 values in K order.
inline void load_u4(const uint8_t* panel, size_t kk, __m256i& lo, __m256i& hi) {
  const __m256i b = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 4)),
                                     _mm256_set1_epi8(static_cast<char>(0x88)));
  const __m256i mask = _mm256_set1_epi8(0x0f);
  const __m256i l = _mm256_and_si256(b, mask), h = _mm256_and_si256(_mm256_srli_epi16(b, 4), mask);
  lo = _mm256_unpacklo_epi8(l, h);
  hi = _mm256_unpackhi_epi8(l, h);
}

// The ymm epilogue: one LHS row's outputs of one 8-row panel (tail: the panel's row sums,
// scales, biases), isum = acc + zp_fold·Σw + add, then float(isum)·(s_a·s_w) + bias, clamped.
struct Ymm8 {
  static constexpr size_t kNr = 8;
  using F = __m256;
  using I = __m256i;
  static F set1(float x) { return _mm256_set1_ps(x); }
  static void store_row(const uint8_t* tail, I acc, int32_t zp_fold, int32_t add, float sa, float* dst, size_t cols, F lo,
                        F hi) {
    const I sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tail));
    const F sw = _mm256_loadu_ps(reinterpret_cast<const float*>(tail + kNr * 4));
    const F bias = _mm256_loadu_ps(reinterpret_cast<const float*>(tail + 2 * kNr * 4));
    const I isum = _mm256_add_epi32(_mm256_add_epi32(acc, _mm256_mullo_epi32(sums, _mm256_set1_epi32(zp_fold))),
                                    _mm256_set1_epi32(add));
    const F v = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(_mm256_set1_ps(sa), sw)), bias);
    avx2::store_clamped(dst, v, cols, lo, hi);
  }
};

// The RHS panel formats (kernels/ref/layouts_c.h).
struct Qsi4cxp {
  static size_t data_bytes(size_t nr, size_t k) { return layout::qsi4cxp_data_bytes(nr, k); }
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi4cxp_panel_bytes(nr, k); }
};
struct Qsi8cxp {
  static size_t data_bytes(size_t nr, size_t k) { return layout::qsi8cxp_data_bytes(nr, k); }
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi8cxp_panel_bytes(nr, k); }
};

// Σ of the int8 of each row of an MR-row qai8dxp panel (kr = 8), padding included (the packer repeats column k - 1 there; the RHS padding is zero).
template <size_t MR>
void lhs_row_sums(const uint8_t* lp, size_t k, int32_t* sums) {
  const size_t kp = layout::kc_padded(k);
  for (size_t r = 0; r < MR; ++r) {
    int32_t s = 0;
    for (size_t kk = 0; kk < kp; kk += kKr) {
      const auto* a = reinterpret_cast<const int8_t*>(lp + kk * MR + r * kKr);
      for (size_t j = 0; j < kKr; ++j) s += a[j];
    }
    sums[r] = s;
  }
}

// Rows 0..MR-1 of one LHS panel (m valid) × C 8-row RHS panels `rpanel` bytes apart (n valid
// columns in all); asum: the LHS rows' Σq (read only when D::kAsum != 0). With pf != 0 the
// same bytes of each panel at +pf (the next tile's) are prefetched into L2: the hardware
// prefetcher restarts at every panel (docs/design.md §5).
template <class D, class Rhs, size_t MR, size_t C>
void tile(size_t m, size_t n, size_t k, const uint8_t* lp, const int32_t* asum, const uint8_t* rp, size_t rpanel,
          size_t pf, float* dst, size_t stride, typename D::V::F vlo, typename D::V::F vhi) {
  constexpr size_t kNr = D::V::kNr;
  const size_t kp = layout::kc_padded(k);
  typename D::Acc acc[C][MR];
  for (size_t c = 0; c < C; ++c)
    for (size_t r = 0; r < MR; ++r) acc[c][r] = D::zero();
  for (size_t kk = 0; kk < kp; kk += D::kStep) {
    const size_t off = kk * (Rhs::data_bytes(kNr, 32) / 32);  // bytes of the step in a panel
    if (pf != 0 && off % 64 == 0) {
      for (size_t c = 0; c < C; ++c) _mm_prefetch(reinterpret_cast<const char*>(rp + c * rpanel + pf + off), _MM_HINT_T1);
    }
    typename D::W w[C];
    for (size_t c = 0; c < C; ++c) w[c] = D::load_w(rp + c * rpanel, kk);
    for (size_t r = 0; r < MR; ++r) {
      const typename D::A a = D::load_a(lp, MR, r, kk);
      for (size_t c = 0; c < C; ++c) D::dot(acc[c][r], a, w[c]);
    }
  }
  for (size_t c = 0; c < C && c * kNr < n; ++c) {
    const uint8_t* tail = rp + c * rpanel + Rhs::data_bytes(kNr, k);
    const size_t cols = std::min(kNr, n - c * kNr);
    for (size_t r = 0; r < MR && r < m; ++r) {
      const int32_t zp_fold = layout::qai8dxp_neg_zero_point(lp, MR, k, r) + D::kFold;
      D::V::store_row(tail, D::finish(acc[c][r]), zp_fold, D::kAsum == 0 ? 0 : D::kAsum * asum[r],
                      layout::qai8dxp_scale(lp, MR, k, r), avx2::row_ptr(dst, stride, r) + c * kNr, cols, vlo, vhi);
    }
  }
}

// The LHS is visited in blocks of about kLhsBlockBytes, each block against every RHS tile:
// a tile's weights are read from memory once per block and then served from L1/L2 for each
// of the block's row panels, and the block itself stays in L2.
constexpr size_t kLhsBlockBytes = 128 * 1024;
constexpr size_t kMaxBlockPanels = 16;

// D's GEMM (MR > 1) or GEMV (MR = 1) over C-panel tiles.
template <class D, class Rhs, size_t MR, size_t C>
void run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  constexpr size_t kNr = D::V::kNr;
  const typename D::V::F vlo = D::V::set1(lo), vhi = D::V::set1(hi);
  const size_t lpanel = layout::qai8dxp_panel_bytes(MR, k), rpanel = Rhs::panel_bytes(kNr, k);
  const size_t block_panels = std::clamp<size_t>(kLhsBlockBytes / lpanel, 1, kMaxBlockPanels);
  const auto* lbase = static_cast<const uint8_t*>(lhs);
  const auto* rbase = static_cast<const uint8_t*>(rhs);
  int32_t asum[kMaxBlockPanels][MR] = {};
  for (size_t i0 = 0; i0 < m; i0 += block_panels * MR) {
    const size_t i1 = std::min(m, i0 + block_panels * MR);
    if (D::kAsum != 0) {
      for (size_t i = i0; i < i1; i += MR) lhs_row_sums<MR>(lbase + i / MR * lpanel, k, asum[(i - i0) / MR]);
    }
    for (size_t j = 0; j < n; j += C * kNr) {
      const size_t cols = std::min(C * kNr, n - j);
      for (size_t i = i0; i < i1; i += MR) {
        const uint8_t* lp = lbase + i / MR * lpanel;
        float* out = avx2::row_ptr(dst, stride, i) + j;
        const int32_t* as = asum[(i - i0) / MR];
        // The block's last row tile fetches the next full column tile ahead (never past n).
        const size_t pf = i + MR >= i1 && j + 2 * C * kNr <= n ? C * rpanel : 0;
        if (cols == C * kNr) {
          tile<D, Rhs, MR, C>(m - i, cols, k, lp, as, rbase + j / kNr * rpanel, rpanel, pf, out, stride, vlo, vhi);
        } else {
          for (size_t jj = 0; jj < cols; jj += kNr) {
            tile<D, Rhs, MR, 1>(m - i, cols - jj, k, lp, as, rbase + (j + jj) / kNr * rpanel, rpanel, 0, out + jj,
                                stride, vlo, vhi);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace qmm::avx2ch
