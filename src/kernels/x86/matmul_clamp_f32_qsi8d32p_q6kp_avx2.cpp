#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avx2.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx2_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kblocks.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm {
namespace {

constexpr size_t kNr = 8;

TileParams gemm_params(size_t) { return {4, kNr, 4, 2, 4, kNr}; }
TileParams gemv_params(size_t) { return {1, kNr, 4, 2, 1, kNr}; }

// The int8 scales of 8 columns at p, each sign-extended into both int16 halves of its lane:
// the 8 bytes in both 128-bit halves, byte c moved to the high byte of both int16 of lane c,
// then an arithmetic shift right by 8.
inline __m256i scale_pairs(const uint8_t* p) {
  const __m256i ctl = _mm256_setr_epi8(-128, 0, -128, 0, -128, 1, -128, 1, -128, 2, -128, 2, -128, 3, -128, 3,  //
                                       -128, 4, -128, 4, -128, 5, -128, 5, -128, 6, -128, 6, -128, 7, -128, 7);
  int64_t v;
  std::memcpy(&v, p, 8);
  return _mm256_srai_epi16(_mm256_shuffle_epi8(_mm256_set1_epi64x(v), ctl), 8);
}

// The 6-bit levels u = q + 32 of 32-block t (0..3) of a 128-weight half, from its ql and qh
// chunk vectors: the low (t < 2) or high nibble of ql, bits 2t, 2t+1 of qh moved to bits 4, 5
// (16-bit shifts: no bit that lands in bits 0-5 of a byte comes from the other byte).
template <size_t T>
inline __m256i levels(__m256i ql, __m256i qh) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
  const __m256i lo = _mm256_and_si256(T < 2 ? ql : _mm256_srli_epi16(ql, 4), m4);
  __m256i hi = qh;
  if constexpr (T == 0) hi = _mm256_slli_epi16(qh, 4);
  if constexpr (T == 1) hi = _mm256_slli_epi16(qh, 2);
  if constexpr (T == 3) hi = _mm256_srli_epi16(qh, 2);
  return _mm256_or_si256(lo, _mm256_and_si256(hi, m30));
}

// One super-block of R rows x C panels (the x86_qloops.h step).
struct Q6K {
  static constexpr size_t kStepBlocks = 8, kRhsBlock = kNr * 210;
  static constexpr bool kPrefetchesInStep = true;

  template <size_t R, size_t C, size_t RL = R>
  static void step(const uint8_t* w, size_t stride, const uint8_t* a, __m256 acc[C][R], size_t pf) {
    __m256 t[C][R];  // Σ over the 32-blocks of int32 sums × s_a; d is applied once at the end
    for (size_t c = 0; c < C; ++c)
      for (size_t r = 0; r < R; ++r) t[c][r] = _mm256_setzero_ps();
    int32_t z[16 * RL];  // the sums start at −32·Σa (int16 pairs), so they end at Σ(u − 32)·a
    x86q::q6k_super_block_zero_points<RL, false>(a, z);
#pragma GCC unroll 1
    for (size_t h = 0; h < 2; ++h) {
      const uint8_t* ah = a + 4 * h * RL * x86lhs::kBlockBytes;
      block<0, R, C, RL>(w, stride, h, ah, z, t, pf);
      block<1, R, C, RL>(w, stride, h, ah + RL * x86lhs::kBlockBytes, z, t, pf);
      block<2, R, C, RL>(w, stride, h, ah + 2 * RL * x86lhs::kBlockBytes, z, t, pf);
      block<3, R, C, RL>(w, stride, h, ah + 3 * RL * x86lhs::kBlockBytes, z, t, pf);
    }
    for (size_t c = 0; c < C; ++c) {
      const __m256 d = avx2::load_f16x8(w + c * stride + 208 * kNr);
      for (size_t r = 0; r < R; ++r) acc[c][r] = _mm256_fmadd_ps(t[c][r], d, acc[c][r]);
    }
  }

  // 32-block j = 4h + T (activations aj): per 16-weight sub-block, Σ(u − 32)·a in int16
  // (wrapping adds from the zero points on: each lane's final value fits), vpmaddwd by its
  // scale, to F32, one FMA with s_a. With pf != 0, part j of 8 of each
  // panel's super-block at +pf is prefetched into L2.
  template <size_t T, size_t R, size_t C, size_t RL>
  static void block(const uint8_t* w, size_t stride, size_t h, const uint8_t* aj, const int32_t* z, __m256 t[C][R],
                    size_t pf) {
    if (pf != 0) {
      for (size_t c = 0; c < C; ++c) x86q::prefetch_part<kRhsBlock, 8>(w + c * stride + pf, 4 * h + T);
    }
    const uint8_t* ql = w + (2 * h + T % 2) * 32 * kNr;
    const uint8_t* qh = w + 128 * kNr + h * 32 * kNr;
#pragma GCC unroll 1
    for (size_t half = 0; half < 2; ++half) {
      __m256i s[C][R];
      for (size_t r = 0; r < R; ++r) {
        const __m256i zr = _mm256_set1_epi32(z[(2 * (4 * h + T) + half) * RL + r]);
        for (size_t c = 0; c < C; ++c) s[c][r] = zr;
      }
#pragma GCC unroll 1
      for (size_t i = 0; i < 4; ++i) {
        const size_t v = 4 * half + i;
        __m256i u[C];
        for (size_t c = 0; c < C; ++c) {
          u[c] = levels<T>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + c * stride + 32 * v)),
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + c * stride + 32 * v)));
        }
        for (size_t r = 0; r < R; ++r) {
          const __m256i av = avx2::broadcast4(aj + 4 * RL * v + 4 * r);
          for (size_t c = 0; c < C; ++c) s[c][r] = _mm256_add_epi16(s[c][r], _mm256_maddubs_epi16(u[c], av));
        }
      }
      const size_t g = 2 * (4 * h + T) + half;
      for (size_t c = 0; c < C; ++c) {
        const __m256i sc = scale_pairs(w + c * stride + 192 * kNr + g * kNr);
        for (size_t r = 0; r < R; ++r) {
          const __m256i part = _mm256_madd_epi16(s[c][r], sc);
          t[c][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(part), avx2::broadcast_f32(aj + 32 * RL + 4 * r), t[c][r]);
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

void gemv_near(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<avx2::Ymm, Q6K, x86q::kGemvNear>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avx2_maddubs", Isa::avx2, WeightType::q6_k, false, gemm_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avx2_maddubs", Isa::avx2, WeightType::q6_k, true, gemv_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, gemv};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avx2_maddubsnear = {
    "matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avx2_maddubsnear", Isa::avx2, WeightType::q6_k, true, gemv_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, gemv_near};

}  // namespace qmm
