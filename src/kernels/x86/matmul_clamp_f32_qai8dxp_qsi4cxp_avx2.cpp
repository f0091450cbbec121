#include "kernels/x86/matmul_clamp_f32_qai8dxp_qsi4cxp_avx2.h"

#include "kernels/x86/lhs_quant_pack_qai8dxp_f32_avx2.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.h"
#include "kernels/x86/avx2_channel_tiles.h"

namespace qmm {
namespace {

using avx2ch::broadcast8;

// Two 8-K steps per call: vpmaddubsw(w + 8, a) of both (|sum| <= 2·3840) add in int16, then
// one vpmaddwd and one vpaddd: 2.5 instructions per 32 MACs.
struct Dot {
  using V = avx2ch::Ymm8;
  struct Acc {
    __m256i lo, hi;  // int32 pairs of rows 0, 1 | 4, 5 and 2, 3 | 6, 7
  };
  struct W {
    __m256i lo0, hi0, lo1, hi1;
  };
  struct A {
    __m256i a0, a1;
  };
  static constexpr size_t kStep = 16;
  static constexpr int32_t kFold = 0, kAsum = -8;
  static Acc zero() { return {_mm256_setzero_si256(), _mm256_setzero_si256()}; }
  static W load_w(const uint8_t* panel, size_t kk) {
    W w;
    avx2ch::load_u4(panel, kk, w.lo0, w.hi0);
    avx2ch::load_u4(panel, kk + 8, w.lo1, w.hi1);
    return w;
  }
  static A load_a(const uint8_t* lp, size_t mr, size_t r, size_t kk) {
    return {broadcast8(lp + kk * mr + r * 8), broadcast8(lp + (kk + 8) * mr + r * 8)};
  }
  static __m256i pair(__m256i w0, __m256i a0, __m256i w1, __m256i a1) {
    const __m256i s16 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, a0), _mm256_maddubs_epi16(w1, a1));
    return _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
  }
  static void dot(Acc& acc, const A& a, const W& w) {
    acc.lo = _mm256_add_epi32(acc.lo, pair(w.lo0, a.a0, w.lo1, a.a1));
    acc.hi = _mm256_add_epi32(acc.hi, pair(w.hi0, a.a0, w.hi1, a.a1));
  }
  static __m256i finish(const Acc& acc) { return _mm256_hadd_epi32(acc.lo, acc.hi); }
};

// The GEMV's: the nibble planes times the LHS row's even / odd values (no byte interleave);
// four vpmaddubsw (|sum| <= 4·3840) add in int16, one vpmaddwd gives row r in lane r.
struct GemvDot {
  using V = avx2ch::Ymm8;
  using Acc = __m256i;
  struct W {
    __m256i l0, h0, l1, h1;
  };
  struct A {
    __m256i e0, o0, e1, o1;
  };
  static constexpr size_t kStep = 16;
  static constexpr int32_t kFold = 0, kAsum = -8;
  static Acc zero() { return _mm256_setzero_si256(); }
  static W load_w(const uint8_t* panel, size_t kk) {
    W w;
    avx2ch::load_u4_planes(panel, kk, w.l0, w.h0);
    avx2ch::load_u4_planes(panel, kk + 8, w.l1, w.h1);
    return w;
  }
  static A load_a(const uint8_t* lp, size_t mr, size_t r, size_t kk) {
    A a;
    avx2ch::broadcast_even_odd(lp + kk * mr + r * 8, a.e0, a.o0);
    avx2ch::broadcast_even_odd(lp + (kk + 8) * mr + r * 8, a.e1, a.o1);
    return a;
  }
  static void dot(Acc& acc, const A& a, const W& w) {
    const __m256i s0 = _mm256_add_epi16(_mm256_maddubs_epi16(w.l0, a.e0), _mm256_maddubs_epi16(w.h0, a.o0));
    const __m256i s1 = _mm256_add_epi16(_mm256_maddubs_epi16(w.l1, a.e1), _mm256_maddubs_epi16(w.h1, a.o1));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_add_epi16(s0, s1), _mm256_set1_epi16(1)));
  }
  static __m256i finish(const Acc& acc) { return acc; }
};

TileParams gemm_params(size_t) { return {4, 8, 8, 1, 4, 8}; }
TileParams gemv_params(size_t) { return {1, 8, 8, 1, 1, 8}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_4x8_avx2_maddubs = {
    "matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_4x8_avx2_maddubs", Isa::avx2, WeightType::qc4, false, gemm_params,
    &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, avx2ch::run<Dot, avx2ch::Qsi4cxp, 4, 1>};
const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8_avx2_maddubs = {
    "matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8_avx2_maddubs", Isa::avx2, WeightType::qc4, true, gemv_params,
    &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, avx2ch::run<GemvDot, avx2ch::Qsi4cxp, 1, 4>};

}  // namespace qmm
