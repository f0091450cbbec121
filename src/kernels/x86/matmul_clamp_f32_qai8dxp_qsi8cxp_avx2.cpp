#include "kernels/x86/matmul_clamp_f32_qai8dxp_qsi8cxp_avx2.h"

#include "kernels/x86/lhs_quant_pack_qai8dxp_f32_avx2.h"
#include "kernels/ref/rhs_pack_nxk_qsi8cxp_qsi8cx.h"
#include "kernels/x86/avx2_channel_tiles.h"

namespace qmm {
namespace {

// One 8-K step: the panel's 64 bytes as four int16 vectors of two rows each (rows 2i | 2i+1),
// the LHS row's 8 values as int16 in both halves; one vpmaddwd + vpaddd per row pair.
struct Dot {
  using V = avx2ch::Ymm8;
  struct Acc {
    __m256i v[4];  // row pair i: four int32 partial sums of row 2i | of row 2i + 1
  };
  struct W {
    __m256i v[4];
  };
  using A = __m256i;
  static constexpr size_t kStep = 8;
  static constexpr int32_t kFold = 0, kAsum = 0;
  static Acc zero() { return {{_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()}}; }
  static W load_w(const uint8_t* panel, size_t kk) {
    W w;
    for (size_t i = 0; i < 4; ++i) {
      w.v[i] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(panel + kk * 8 + i * 16)));
    }
    return w;
  }
  static A load_a(const uint8_t* lp, size_t mr, size_t r, size_t kk) {
    const __m128i a = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(lp + kk * mr + r * 8)));
    return _mm256_broadcastsi128_si256(a);
  }
  static void dot(Acc& acc, const A& a, const W& w) {
    for (size_t i = 0; i < 4; ++i) acc.v[i] = _mm256_add_epi32(acc.v[i], _mm256_madd_epi16(w.v[i], a));
  }
  // hadd, hadd: [r0 r2 r4 r6 | r1 r3 r5 r7], then into row order.
  static __m256i finish(const Acc& acc) {
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(acc.v[0], acc.v[1]), _mm256_hadd_epi32(acc.v[2], acc.v[3]));
    return _mm256_permutevar8x32_epi32(h, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  }
};

TileParams gemm_params(size_t) { return {2, 8, 8, 1, 2, 8}; }
TileParams gemv_params(size_t) { return {1, 8, 8, 1, 1, 8}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp2x8_qsi8cxp8x8_2x8_avx2_maddwd = {
    "matmul_clamp_f32_qai8dxp2x8_qsi8cxp8x8_2x8_avx2_maddwd", Isa::avx2, WeightType::qc8, false, gemm_params,
    &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi8cxp_qsi8cx, avx2ch::run<Dot, avx2ch::Qsi8cxp, 2, 1>};
const Ukernel matmul_clamp_f32_qai8dxp1x8_qsi8cxp8x8_1x8_avx2_maddwd = {
    "matmul_clamp_f32_qai8dxp1x8_qsi8cxp8x8_1x8_avx2_maddwd", Isa::avx2, WeightType::qc8, true, gemv_params,
    &lhs_quant_pack_qai8dxp_f32_avx2, &rhs_pack_nxk_qsi8cxp_qsi8cx, avx2ch::run<Dot, avx2ch::Qsi8cxp, 1, 2>};

}  // namespace qmm
