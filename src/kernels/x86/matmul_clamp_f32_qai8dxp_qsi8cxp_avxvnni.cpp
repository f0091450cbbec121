#include "kernels/x86/matmul_clamp_f32_qai8dxp_qsi8cxp_avxvnni.h"

#include "kernels/x86/lhs_quant_pack_qai8dxp_f32_avx2.h"
#include "kernels/ref/rhs_pack_nxk_qsi8cxp_qsi8cx.h"
#include "kernels/x86/avx2_channel_tiles.h"

namespace qmm {
namespace {

struct Dot {
  using V = avx2ch::Ymm8;
  struct Acc {
    __m256i lo, hi;  // int32 pairs of rows 0, 1 | 2, 3 and 4, 5 | 6, 7
  };
  struct W {
    __m256i lo, hi;  // rows 0..3 and 4..7, 8 values each
  };
  using A = __m256i;
  static constexpr size_t kStep = 8;
  static constexpr int32_t kFold = -128, kAsum = 0;
  static Acc zero() { return {_mm256_setzero_si256(), _mm256_setzero_si256()}; }
  static W load_w(const uint8_t* panel, size_t kk) {
    const auto* p = reinterpret_cast<const __m256i*>(panel + kk * 8);
    return {_mm256_loadu_si256(p), _mm256_loadu_si256(p + 1)};
  }
  static A load_a(const uint8_t* lp, size_t mr, size_t r, size_t kk) {
    return _mm256_xor_si256(avx2ch::broadcast8(lp + kk * mr + r * 8), _mm256_set1_epi8(static_cast<char>(0x80)));
  }
  static void dot(Acc& acc, const A& a, const W& w) {
    acc.lo = _mm256_dpbusd_avx_epi32(acc.lo, a, w.lo);
    acc.hi = _mm256_dpbusd_avx_epi32(acc.hi, a, w.hi);
  }
  // hadd: [r0 r1 r4 r5 | r2 r3 r6 r7], then the 64-bit quarters into row order.
  static __m256i finish(const Acc& acc) { return _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc.lo, acc.hi), 0xD8); }
};

TileParams gemm_params(size_t) { return {4, 8, 8, 1, 4, 8}; }
TileParams gemv_params(size_t) { return {1, 8, 8, 1, 1, 8}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp4x8_qsi8cxp8x8_4x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp4x8_qsi8cxp8x8_4x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::qc8, false, gemm_params,
    &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi8cxp_qsi8cx, avx2ch::run<Dot, avx2ch::Qsi8cxp, 4, 1>};
const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi8cxp8x8_1x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp1x8_qsi8cxp8x8_1x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::qc8, true, gemv_params,
    &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi8cxp_qsi8cx, avx2ch::run<Dot, avx2ch::Qsi8cxp, 1, 2>};

}  // namespace qmm
