#include "kernels/x86/matmul_clamp_f32_qsi8d32p_iq4nlp_avx2.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx2_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kblocks.h"

namespace qmm {
namespace {

using V = avx2::Ymm;

// w · a summed per 32-bit lane into s: |w| · sign(a, w) (vpmaddubsw's u8 x s8), vpmaddwd by 1.
inline __m256i dot_signed(__m256i s, __m256i w, __m256i a) {
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(a, w));
  return _mm256_add_epi32(s, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

// One 32-block of R rows x C panels (the x86_qloops.h dot).
struct Iq4nl {
  static constexpr size_t kRhsBlock = V::kLanes * 18, kScaleOffset = 16 * V::kLanes;
  template <size_t R, size_t C, size_t RL = R>
  static void dot(const uint8_t* w, size_t stride, const uint8_t* a, __m256i s[C][R]) {
    const __m256i table = V::broadcast16(x86q::Iq4nlTable<0>::bytes);
    for (size_t c = 0; c < C; ++c)
      for (size_t r = 0; r < R; ++r) s[c][r] = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (size_t v = 0; v < 4; ++v) {
      __m256i lo[C], hi[C];
      for (size_t c = 0; c < C; ++c) x86q::iq4nl_values<V>(table, w + c * stride, v, lo[c], hi[c]);
      for (size_t r = 0; r < R; ++r) {
        const __m256i alo = avx2::broadcast4(a + 4 * RL * v + 4 * r), ahi = avx2::broadcast4(a + 4 * RL * (v + 4) + 4 * r);
        for (size_t c = 0; c < C; ++c) s[c][r] = dot_signed(dot_signed(s[c][r], lo[c], alo), hi[c], ahi);
      }
    }
  }
};

using K = x86q::Kernels<V, Iq4nl, 4, 2>;

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x4_4x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x4_4x8_avx2_maddubs", Isa::avx2, WeightType::iq4_nl, false, K::gemm_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_iq4nlp_iq4nl, K::gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp8x4_1x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p1x4_iq4nlp8x4_1x8_avx2_maddubs", Isa::avx2, WeightType::iq4_nl, true, K::gemv_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_iq4nlp_iq4nl, K::gemv};

}  // namespace qmm
