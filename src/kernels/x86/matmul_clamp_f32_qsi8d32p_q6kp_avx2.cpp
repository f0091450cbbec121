#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avx2.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx2_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm {
namespace {

constexpr size_t kNr = 8;

TileParams gemm_params(size_t) { return {4, kNr, 4, 2, 4, kNr}; }
TileParams gemv_params(size_t) { return {1, kNr, 4, 2, 1, kNr}; }

// The int8 scales of 8 columns at p, each sign-extended into both int16 halves of its lane.
inline __m256i scale_pairs(const uint8_t* p) {
  const __m256i x = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  return _mm256_or_si256(_mm256_and_si256(x, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(x, 16));
}

// Bits 2t, 2t+1 of each byte of qh moved to bits 4, 5 (16-bit shifts: no bit that lands in
// bits 4-5 of a byte comes from the other byte for these counts).
inline __m256i high_bits(__m256i qh, size_t t) {
  const __m256i m = _mm256_set1_epi8(0x30);
  switch (t) {
    case 0: return _mm256_and_si256(_mm256_slli_epi16(qh, 4), m);
    case 1: return _mm256_and_si256(_mm256_slli_epi16(qh, 2), m);
    case 2: return _mm256_and_si256(qh, m);
    default: return _mm256_and_si256(_mm256_srli_epi16(qh, 2), m);
  }
}

// One super-block of R rows x C panels (the x86_qloops.h step).
struct Q6K {
  static constexpr size_t kStepBlocks = 8, kRhsBlock = kNr * 210;

  template <size_t R, size_t C, size_t RL = R>
  static void step(const uint8_t* w, size_t stride, const uint8_t* a, __m256 acc[C][R]) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), k32 = _mm256_set1_epi8(32);
    __m256 d[C];
    for (size_t c = 0; c < C; ++c) d[c] = avx2::load_f16x8(w + c * stride + 208 * kNr);
#pragma GCC unroll 1
    for (size_t j = 0; j < 8; ++j) {
      const size_t h = j / 4, t = j % 4;
      const uint8_t* aj = a + j * RL * x86lhs::kBlockBytes;
      const uint8_t* ql = w + (2 * h + t % 2) * 32 * kNr;
      const uint8_t* qh = w + 128 * kNr + h * 32 * kNr;
      const int nib_shift = t < 2 ? 0 : 4;
      __m256i isum[C][R] = {};
      for (size_t half = 0; half < 2; ++half) {
        __m256i s[C][R] = {}, z[R] = {};
        for (size_t v = 4 * half; v < 4 * half + 4; ++v) {
          __m256i u[C];
          for (size_t c = 0; c < C; ++c) {
            const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + c * stride + 32 * v));
            const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + c * stride + 32 * v));
            u[c] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lo, nib_shift), m4), high_bits(hi, t));
          }
          for (size_t r = 0; r < R; ++r) {
            const __m256i av = avx2::broadcast4(aj + 4 * RL * v + 4 * r);
            const __m256i zp = _mm256_maddubs_epi16(k32, av);
            z[r] = _mm256_add_epi16(z[r], zp);
            for (size_t c = 0; c < C; ++c) {
              s[c][r] = _mm256_add_epi16(s[c][r], _mm256_maddubs_epi16(u[c], av));
            }
          }
        }
        for (size_t c = 0; c < C; ++c) {
          const __m256i sc = scale_pairs(w + c * stride + 192 * kNr + (2 * j + half) * kNr);
          for (size_t r = 0; r < R; ++r) {
            const __m256i part = _mm256_madd_epi16(_mm256_sub_epi16(s[c][r], z[r]), sc);
            isum[c][r] = _mm256_add_epi32(isum[c][r], part);
          }
        }
      }
      for (size_t r = 0; r < R; ++r) {
        const __m256 sa = avx2::broadcast_f32(aj + 32 * RL + 4 * r);
        for (size_t c = 0; c < C; ++c) {
          acc[c][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c][r]), _mm256_mul_ps(d[c], sa), acc[c][r]);
        }
      }
    }
  }
};

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  x86q::gemm<avx2::Ymm, Q6K, 4, 2>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<avx2::Ymm, Q6K>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avx2_maddubs", Isa::avx2, WeightType::q6_k, false, gemm_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avx2_maddubs", Isa::avx2, WeightType::q6_k, true, gemv_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, gemv};

}  // namespace qmm
