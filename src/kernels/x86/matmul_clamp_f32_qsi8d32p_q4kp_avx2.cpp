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

// Sub-block j's 8 scale bytes at p (one per column) as the int16 pair (sc, sc) of each
// column's lane, in both 128-bit halves (a vpmaddwd operand).
inline __m256i scale_pairs(const uint8_t* p) {
  const __m256i x = _mm256_broadcastsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  const __m256i to_sc = _mm256_setr_epi8(0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1,  //
                                         4, -1, 4, -1, 5, -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1);
  return _mm256_shuffle_epi8(x, to_sc);
}

// Sub-block j's 8 min bytes at p (one per column) as F32.
inline __m256 mins(const uint8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// (−8Σa)·s_a of row r of an RL-row LHS block aj, from its int16 pair (tiles with RL < 4).
inline __m256 neg8sum_row(const uint8_t* aj, size_t r, size_t rl) {
  const __m256i sums = _mm256_madd_epi16(avx2::broadcast4(aj + 36 * rl + 4 * r), _mm256_set1_epi16(1));
  return _mm256_mul_ps(_mm256_cvtepi32_ps(sums), avx2::broadcast_f32(aj + 32 * rl + 4 * r));
}

// One super-block of R rows x C panels (the x86_qloops.h step).
struct Q4K {
  static constexpr size_t kStepBlocks = 8, kRhsBlock = kNr * 148;
  static constexpr bool kPrefetchesInStep = true;

  template <size_t R, size_t C, size_t RL = R>
  static void step(const uint8_t* w, size_t stride, const uint8_t* a, __m256 acc[C][R], size_t pf) {
    // Σ_j s_a·(sc_j·Σq·a) and Σ_j s_a·(m_j·(−8Σa)) of the super-block; d and dmin/8 at the end.
    __m256 t[C][R];
    for (size_t c = 0; c < C; ++c)
      for (size_t r = 0; r < R; ++r) t[c][r] = _mm256_setzero_ps();
    float nb[x86q::kMinFactors<RL>];
    x86q::super_block_min_factors<RL>(a, nb);
#pragma GCC unroll 1
    for (size_t pair = 0; pair < 4; ++pair) {  // sub-blocks 2·pair (low nibbles) and 2·pair + 1
      const uint8_t* a0 = a + 2 * pair * RL * x86lhs::kBlockBytes;
      sub_block<false, R, C, RL>(w, stride, pair, a0, t, pf);
      sub_block<true, R, C, RL>(w, stride, pair, a0 + RL * x86lhs::kBlockBytes, t, pf);
    }
    for (size_t c = 0; c < C; ++c) {
      const __m256 d = avx2::load_f16x8(w + c * stride + 144 * kNr);
      for (size_t r = 0; r < R; ++r) acc[c][r] = _mm256_fmadd_ps(t[c][r], d, acc[c][r]);
    }
    min_terms<R, C, RL>(w, stride, a, nb, acc);
  }

  // The super-block's min terms, after its dot products (fewer live registers there):
  // acc += (dmin/8·m_j)·((−8Σa)·s_a) per sub-block j.
  template <size_t R, size_t C, size_t RL>
  static void min_terms(const uint8_t* w, size_t stride, const uint8_t* a, const float* nb, __m256 acc[C][R]) {
    __m256 dmin8[C];
    for (size_t c = 0; c < C; ++c)
      dmin8[c] = _mm256_mul_ps(avx2::load_f16x8(w + c * stride + 146 * kNr), _mm256_set1_ps(0.125f));
#pragma GCC unroll 1
    for (size_t j = 0; j < 8; ++j) {
      const uint8_t* aj = a + j * RL * x86lhs::kBlockBytes;
      __m256 mn[C];
      for (size_t c = 0; c < C; ++c) mn[c] = _mm256_mul_ps(mins(w + c * stride + 128 * kNr + 2 * kNr * j + kNr), dmin8[c]);
      for (size_t r = 0; r < R; ++r) {
        const __m256 neg8sum = RL >= 4 ? _mm256_broadcast_ss(nb + j * RL + r) : neg8sum_row(aj, r, RL);
        for (size_t c = 0; c < C; ++c) acc[c][r] = _mm256_fmadd_ps(mn[c], neg8sum, acc[c][r]);
      }
    }
  }

  // Sub-block j = 2·pair + kHigh (activations aj): its levels are the low or high nibbles of
  // the pair's 32-byte group, multiplied with vpmaddubsw and summed in int16 (8 products of
  // q <= 15, |a| <= 127: no overflow). One pass per nibble: both at once need 2·C·R
  // accumulators, and the GEMV's 8 spilled.
  template <bool kHigh, size_t R, size_t C, size_t RL>
  static void sub_block(const uint8_t* w, size_t stride, size_t pair, const uint8_t* aj, __m256 t[C][R], size_t pf) {
    if (pf != 0) {  // an eighth of the next group's super-block per sub-block (x86_qloops.h)
      for (size_t c = 0; c < C; ++c) x86q::prefetch_part<kRhsBlock, 8>(w + c * stride + pf, 2 * pair + kHigh);
    }
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const uint8_t* q = w + pair * 32 * kNr;
    __m256i s[C][R] = {};
    // Kept a loop: unrolled, GCC hoists every product first and spills them.
#pragma GCC unroll 2
    for (size_t v = 0; v < 8; ++v) {
      __m256i u[C];
      for (size_t c = 0; c < C; ++c) {
        const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + c * stride + 32 * v));
        u[c] = _mm256_and_si256(kHigh ? _mm256_srli_epi16(wv, 4) : wv, m4);
      }
      for (size_t r = 0; r < R; ++r) {
        const __m256i av = avx2::broadcast4(aj + 4 * RL * v + 4 * r);
        for (size_t c = 0; c < C; ++c) s[c][r] = _mm256_add_epi16(_mm256_maddubs_epi16(u[c], av), s[c][r]);
      }
    }
    finish<R, C, RL>(w, stride, 2 * pair + kHigh, aj, s, t);
  }

  // Sub-block j's int16 sums s: vpmaddwd by its scale (int32), to F32, times s_a.
  template <size_t R, size_t C, size_t RL>
  static void finish(const uint8_t* w, size_t stride, size_t j, const uint8_t* aj, __m256i s[C][R], __m256 t[C][R]) {
    __m256i sc[C];
    for (size_t c = 0; c < C; ++c) sc[c] = scale_pairs(w + c * stride + 128 * kNr + 2 * kNr * j);
    for (size_t r = 0; r < R; ++r) {
      const __m256 sa = avx2::broadcast_f32(aj + 32 * RL + 4 * r);
      for (size_t c = 0; c < C; ++c)
        t[c][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(s[c][r], sc[c])), sa, t[c][r]);
    }
  }
};

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  x86q::gemm<avx2::Ymm, Q4K, 4, 2>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<avx2::Ymm, Q4K>(n, k, lhs, rhs, dst, lo, hi);
}

void gemv_near(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<avx2::Ymm, Q4K, x86q::kGemvNear>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avx2_maddubs", Isa::avx2, WeightType::q4_k, false, gemm_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubs", Isa::avx2, WeightType::q4_k, true, gemv_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemv};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubsnear = {
    "matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avx2_maddubsnear", Isa::avx2, WeightType::q4_k, true, gemv_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemv_near};

}  // namespace qmm
