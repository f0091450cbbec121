#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q4kp_avx2.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx2_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm {
namespace {

constexpr size_t kNr = 8;

TileParams gemm_params(size_t) { return {4, kNr, 4, 2, 4, kNr}; }
TileParams gemv_params(size_t) { return {1, kNr, 4, 2, 1, kNr}; }

// 8 bytes at p (one per column) -> F32.
inline __m256 bytes_to_f32(const uint8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// One super-block of R rows x C panels (the x86_qloops.h step).
struct Q4K {
  static constexpr size_t kStepBlocks = 8, kRhsBlock = kNr * 148;

  template <size_t R, size_t C, size_t RL = R>
  static void step(const uint8_t* w, size_t stride, const uint8_t* a, __m256 acc[C][R]) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    __m256 d[C], dmin8[C];
    for (size_t c = 0; c < C; ++c) {
      d[c] = avx2::load_f16x8(w + c * stride + 144 * kNr);
      dmin8[c] = _mm256_mul_ps(avx2::load_f16x8(w + c * stride + 146 * kNr), _mm256_set1_ps(0.125f));
    }
#pragma GCC unroll 1
    for (size_t pair = 0; pair < 4; ++pair) {  // sub-blocks 2·pair (low nibbles) and 2·pair + 1
      const uint8_t* a0 = a + 2 * pair * RL * x86lhs::kBlockBytes;
      const uint8_t* a1 = a0 + RL * x86lhs::kBlockBytes;
      const uint8_t* q = w + pair * 32 * kNr;
      __m256i s0[C][R] = {}, s1[C][R] = {};
      for (size_t v = 0; v < 8; ++v) {
        __m256i lo[C], hi[C];
        for (size_t c = 0; c < C; ++c) {
          const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + c * stride + 32 * v));
          lo[c] = _mm256_and_si256(wv, m4);
          hi[c] = _mm256_and_si256(_mm256_srli_epi16(wv, 4), m4);
        }
        for (size_t r = 0; r < R; ++r) {
          const __m256i av0 = avx2::broadcast4(a0 + 4 * RL * v + 4 * r), av1 = avx2::broadcast4(a1 + 4 * RL * v + 4 * r);
          for (size_t c = 0; c < C; ++c) {
            s0[c][r] = _mm256_add_epi16(s0[c][r], _mm256_maddubs_epi16(lo[c], av0));
            s1[c][r] = _mm256_add_epi16(s1[c][r], _mm256_maddubs_epi16(hi[c], av1));
          }
        }
      }
      finish<R, C, RL>(w, stride, 2 * pair, a0, d, dmin8, s0, acc);
      finish<R, C, RL>(w, stride, 2 * pair + 1, a1, d, dmin8, s1, acc);
    }
  }

  // Sub-block j's scales on its int16 sums s, and its min term, into acc.
  template <size_t R, size_t C, size_t RL>
  static void finish(const uint8_t* w, size_t stride, size_t j, const uint8_t* aj, const __m256 d[C],
                     const __m256 dmin8[C], __m256i s[C][R], __m256 acc[C][R]) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 sc[C], mn[C];
    for (size_t c = 0; c < C; ++c) {
      const uint8_t* sm = w + c * stride + 128 * kNr + 2 * kNr * j;
      sc[c] = _mm256_mul_ps(bytes_to_f32(sm), d[c]);
      mn[c] = _mm256_mul_ps(bytes_to_f32(sm + kNr), dmin8[c]);
    }
    for (size_t r = 0; r < R; ++r) {
      const __m256 sa = avx2::broadcast_f32(aj + 32 * RL + 4 * r);
      const __m256 neg8sum = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(avx2::broadcast4(aj + 36 * RL + 4 * r), ones)), sa);
      for (size_t c = 0; c < C; ++c) {
        const __m256 isum = _mm256_cvtepi32_ps(_mm256_madd_epi16(s[c][r], ones));
        acc[c][r] = _mm256_fmadd_ps(isum, _mm256_mul_ps(sc[c], sa), acc[c][r]);
        acc[c][r] = _mm256_fmadd_ps(mn[c], neg8sum, acc[c][r]);
      }
    }
  }
};

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  x86q::gemm<avx2::Ymm, Q4K, 4, 1>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<avx2::Ymm, Q4K>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avx2_maddubs", Isa::avx2, WeightType::q4_k, false, gemm_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubs", Isa::avx2, WeightType::q4_k, true, gemv_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemv};

}  // namespace qmm
