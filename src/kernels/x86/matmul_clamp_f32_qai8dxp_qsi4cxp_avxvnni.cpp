#include "kernels/x86/matmul_clamp_f32_qai8dxp_qsi4cxp_avxvnni.h"

#include "kernels/x86/lhs_quant_pack_qai8dxp_f32_avx2.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.h"
#include "kernels/x86/avx2_channel_tiles.h"

namespace qmm {
namespace {

struct Dot {
  using V = avx2ch::Ymm8;
  struct Acc {
    __m256i lo, hi;  // int32 pairs of rows 0, 1 | 4, 5 and 2, 3 | 6, 7
  };
  struct W {
    __m256i lo, hi;
  };
  using A = __m256i;
  static constexpr size_t kStep = 8;
  static constexpr int32_t kFold = 0, kAsum = -8;
  static Acc zero() { return {_mm256_setzero_si256(), _mm256_setzero_si256()}; }
  static W load_w(const uint8_t* panel, size_t kk) {
    W w;
    avx2ch::load_u4(panel, kk, w.lo, w.hi);
    return w;
  }
  static A load_a(const uint8_t* lp, size_t mr, size_t r, size_t kk) { return avx2ch::broadcast8(lp + kk * mr + r * 8); }
  static void dot(Acc& acc, const A& a, const W& w) {
    acc.lo = _mm256_dpbusd_avx_epi32(acc.lo, w.lo, a);
    acc.hi = _mm256_dpbusd_avx_epi32(acc.hi, w.hi, a);
  }
  static __m256i finish(const Acc& acc) { return _mm256_hadd_epi32(acc.lo, acc.hi); }
};

// The GEMV's: the nibble planes times the LHS row's even / odd values (no byte interleave),
// two accumulators per panel (two vpdpbusd chains).
struct GemvDot {
  using V = avx2ch::Ymm8;
  struct Acc {
    __m256i even, odd;  // row r in lane r
  };
  struct W {
    __m256i lo, hi;
  };
  struct A {
    __m256i even, odd;
  };
  static constexpr size_t kStep = 8;
  static constexpr int32_t kFold = 0, kAsum = -8;
  static Acc zero() { return {_mm256_setzero_si256(), _mm256_setzero_si256()}; }
  static W load_w(const uint8_t* panel, size_t kk) {
    W w;
    avx2ch::load_u4_planes(panel, kk, w.lo, w.hi);
    return w;
  }
  static A load_a(const uint8_t* lp, size_t mr, size_t r, size_t kk) {
    A a;
    avx2ch::broadcast_even_odd(lp + kk * mr + r * 8, a.even, a.odd);
    return a;
  }
  static void dot(Acc& acc, const A& a, const W& w) {
    acc.even = _mm256_dpbusd_avx_epi32(acc.even, w.lo, a.even);
    acc.odd = _mm256_dpbusd_avx_epi32(acc.odd, w.hi, a.odd);
  }
  static __m256i finish(const Acc& acc) { return _mm256_add_epi32(acc.even, acc.odd); }
};

TileParams gemm_params(size_t) { return {4, 8, 8, 1, 4, 8}; }
TileParams gemv_params(size_t) { return {1, 8, 8, 1, 1, 8}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_4x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_4x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::qc4, false, gemm_params,
    &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, avx2ch::run<Dot, avx2ch::Qsi4cxp, 4, 1>};
const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::qc4, true, gemv_params,
    &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, avx2ch::run<GemvDot, avx2ch::Qsi4cxp, 1, 4>};

}  // namespace qmm
