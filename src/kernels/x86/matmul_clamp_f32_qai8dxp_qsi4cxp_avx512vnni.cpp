#include "kernels/x86/matmul_clamp_f32_qai8dxp_qsi4cxp_avx512vnni.h"

#include <immintrin.h>

#include "kernels/x86/lhs_quant_pack_qai8dxp_f32_avx2.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.h"
#include "kernels/x86/avx2_channel_tiles.h"

namespace qmm {
namespace {

// The zmm epilogue of the shared tile loop (kernels/x86/avx2_channel_tiles.h): 16-row panels.
struct Zmm16 {
  static constexpr size_t kNr = 16;
  using F = __m512;
  using I = __m512i;
  static F set1(float x) { return _mm512_set1_ps(x); }
  static void store_row(const uint8_t* tail, I acc, int32_t zp_fold, int32_t add, float sa, float* dst, size_t cols, F lo,
                        F hi) {
    const I sums = _mm512_loadu_si512(tail);
    const F sw = _mm512_loadu_ps(tail + kNr * 4), bias = _mm512_loadu_ps(tail + 2 * kNr * 4);
    const I isum = _mm512_add_epi32(_mm512_add_epi32(acc, _mm512_mullo_epi32(sums, _mm512_set1_epi32(zp_fold))),
                                    _mm512_set1_epi32(add));
    const F v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(_mm512_set1_ps(sa), sw)), bias);
    const auto mask = static_cast<__mmask16>((1u << cols) - 1);
    _mm512_mask_storeu_ps(dst, mask, _mm512_min_ps(hi, _mm512_max_ps(lo, v)));  // NaN-propagating order
  }
};

// The 8 bytes at p in every 64-bit lane.
__m512i broadcast8(const uint8_t* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return _mm512_set1_epi64(v);
}

// One 8-K step of a 16-row panel (64 bytes, row r in bytes 4r..4r+3, low nibble first) as
// unsigned int8 w + 8 (nibble ^ 8): the low and the high nibbles.
void load_nibbles(const uint8_t* panel, size_t kk, __m512i& l, __m512i& h) {
  const __m512i b = _mm512_xor_si512(_mm512_loadu_si512(panel + kk * 8), _mm512_set1_epi8(static_cast<char>(0x88)));
  const __m512i mask = _mm512_set1_epi8(0x0f);
  l = _mm512_and_si512(b, mask);
  h = _mm512_and_si512(_mm512_srli_epi16(b, 4), mask);
}

// GEMM: the nibbles interleaved back into K order within each 128-bit lane j: lo = rows 4j,
// 4j + 1 and hi = rows 4j + 2, 4j + 3, 8 values each; one vpbroadcastq of the LHS row's step
// and two vpdpbusd per row and panel (w + 8 unsigned, a signed; the epilogue subtracts 8·Σa).
struct Dot {
  using V = Zmm16;
  struct Acc {
    __m512i lo, hi;  // per lane j: two int32 of row 4j, two of 4j + 1 (lo); of 4j + 2, 4j + 3 (hi)
  };
  struct W {
    __m512i lo, hi;
  };
  using A = __m512i;
  static constexpr size_t kStep = 8;
  static constexpr int32_t kFold = 0, kAsum = -8;
  static Acc zero() { return {_mm512_setzero_si512(), _mm512_setzero_si512()}; }
  static W load_w(const uint8_t* panel, size_t kk) {
    __m512i l, h;
    load_nibbles(panel, kk, l, h);
    return {_mm512_unpacklo_epi8(l, h), _mm512_unpackhi_epi8(l, h)};
  }
  static A load_a(const uint8_t* lp, size_t mr, size_t r, size_t kk) { return broadcast8(lp + kk * mr + r * 8); }
  static void dot(Acc& acc, const A& a, const W& w) {
    acc.lo = _mm512_dpbusd_epi32(acc.lo, w.lo, a);
    acc.hi = _mm512_dpbusd_epi32(acc.hi, w.hi, a);
  }
  // Per lane: [lo0 lo2 hi0 hi2] + [lo1 lo3 hi1 hi3] = [s0 s1 s2 s3].
  static __m512i finish(const Acc& acc) {
    const __m512 lo = _mm512_castsi512_ps(acc.lo), hi = _mm512_castsi512_ps(acc.hi);
    return _mm512_add_epi32(_mm512_castps_si512(_mm512_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))),
                            _mm512_castps_si512(_mm512_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))));
  }
};

// GEMV: the nibble planes as they are (row r's even / odd K values in lane r) times the LHS
// row's even / odd bytes (two vpshufb per step, shared by the tile's 4 panels).
struct GemvDot {
  using V = Zmm16;
  struct Acc {
    __m512i even, odd;  // row r in lane r
  };
  struct W {
    __m512i lo, hi;
  };
  struct A {
    __m512i even, odd;
  };
  static constexpr size_t kStep = 8;
  static constexpr int32_t kFold = 0, kAsum = -8;
  static Acc zero() { return {_mm512_setzero_si512(), _mm512_setzero_si512()}; }
  static W load_w(const uint8_t* panel, size_t kk) {
    W w;
    load_nibbles(panel, kk, w.lo, w.hi);
    return w;
  }
  static A load_a(const uint8_t* lp, size_t mr, size_t r, size_t kk) {
    const __m512i q = broadcast8(lp + kk * mr + r * 8);
    return {_mm512_shuffle_epi8(q, _mm512_set1_epi32(0x06040200)), _mm512_shuffle_epi8(q, _mm512_set1_epi32(0x07050301))};
  }
  static void dot(Acc& acc, const A& a, const W& w) {
    acc.even = _mm512_dpbusd_epi32(acc.even, w.lo, a.even);
    acc.odd = _mm512_dpbusd_epi32(acc.odd, w.hi, a.odd);
  }
  static __m512i finish(const Acc& acc) { return _mm512_add_epi32(acc.even, acc.odd); }
};

TileParams gemm_params(size_t) { return {8, 16, 8, 1, 8, 16}; }
TileParams gemv_params(size_t) { return {1, 16, 8, 1, 1, 16}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp8x8_qsi4cxp16x8_8x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp8x8_qsi4cxp16x8_8x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::qc4, false,
    gemm_params, &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, avx2ch::run<Dot, avx2ch::Qsi4cxp, 8, 1>};
const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi4cxp16x8_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp1x8_qsi4cxp16x8_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::qc4, true,
    gemv_params, &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, avx2ch::run<GemvDot, avx2ch::Qsi4cxp, 1, 4>};

}  // namespace qmm
