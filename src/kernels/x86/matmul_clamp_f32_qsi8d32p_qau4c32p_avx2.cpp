#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avx2.h"

#include "kernels/x86/avx2_qloops.h"
#include "kernels/x86/avx2_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0.h"

namespace qmm {
namespace {

constexpr size_t kNr = 8;
constexpr size_t kRhsBlock = kNr * 18;  // bytes per block in an RHS panel

TileParams gemm_params(size_t) { return {4, kNr, 4, 2, 4, kNr}; }
TileParams gemv_params(size_t) { return {1, kNr, 4, 2, 1, kNr}; }

// The GEMM's block: Σ(u − 8)·a of R rows (int32 per column) over one 8-column block of
// weights `w`, LHS block `a` of R rows. The int16 sums start at the LHS's −8·Σa lane pair and
// may wrap on the way; each lane's final value, over 16 products, is within ±16256.
struct Gemm {
  static constexpr size_t kRhsBlock = qmm::kRhsBlock, kScaleOffset = 16 * kNr;
  template <size_t R>
  static void dot(const uint8_t* w, const uint8_t* a, __m256i s[R]) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (size_t r = 0; r < R; ++r) s[r] = avx2::broadcast4(a + 36 * R + 4 * r);
    // Kept a loop: unrolled, GCC hoists every product first and spills them.
#pragma GCC unroll 1
    for (size_t v = 0; v < 4; ++v) {
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * v));
      const __m256i lo = _mm256_and_si256(wv, m4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(wv, 4), m4);
      for (size_t r = 0; r < R; ++r) {  // (lo + hi) first: a shorter dependency chain on s[r]
        const __m256i plo = _mm256_maddubs_epi16(lo, avx2::broadcast4(a + 4 * R * v + 4 * r));
        const __m256i phi = _mm256_maddubs_epi16(hi, avx2::broadcast4(a + 4 * R * (v + 4) + 4 * r));
        s[r] = _mm256_add_epi16(s[r], _mm256_add_epi16(plo, phi));
      }
    }
    for (size_t r = 0; r < R; ++r) s[r] = _mm256_madd_epi16(s[r], _mm256_set1_epi16(1));
  }
};

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  avx2::qgemm<Gemm>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

// The GEMV: P column panels of one row, LHS in the b8 layout (chunks pre-broadcast: memory
// operands); block b of each panel is prefetched at +pf (avx2_qloops.h).
struct Gemv {
  static constexpr size_t kRhsBlock = qmm::kRhsBlock;
  template <size_t P>
  static void panels(const uint8_t* rp, size_t rhs_panel, size_t pf, const uint8_t* lp, size_t blocks, __m256 acc[P]) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (size_t p = 0; p < P; ++p) acc[p] = _mm256_setzero_ps();
    for (size_t b = 0; b < blocks; ++b) {
      const uint8_t* a = lp + b * x86lhs::kBlockBytesB8;
      const __m256 sa = avx2::broadcast_f32(a + 256);
#pragma GCC unroll 4
      for (size_t p = 0; p < P; ++p) {
        const uint8_t* w = rp + p * rhs_panel + b * kRhsBlock;
        avx2::prefetch_l2<kRhsBlock>(w + pf);
        __m256i s = avx2::broadcast4(a + 260);
        for (size_t v = 0; v < 4; ++v) {
          const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * v));
          const __m256i lo = _mm256_and_si256(wv, m4);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(wv, 4), m4);
          const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32 * v)));
          const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32 * (v + 4))));
          s = _mm256_add_epi16(s, _mm256_add_epi16(plo, phi));
        }
        const __m256i i32 = _mm256_madd_epi16(s, _mm256_set1_epi16(1));
        acc[p] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i32), _mm256_mul_ps(avx2::load_f16x8(w + 16 * kNr), sa), acc[p]);
      }
    }
  }
};

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  avx2::qgemv<Gemv>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_qau4c32p8x4_4x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p4x4_qau4c32p8x4_4x8_avx2_maddubs", Isa::avx2, WeightType::q4_0, false, gemm_params,
    &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau4c32p8x4_1x8_avx2_maddubs = {
    "matmul_clamp_f32_qsi8d32p1x4_qau4c32p8x4_1x8_avx2_maddubs", Isa::avx2, WeightType::q4_0, true, gemv_params,
    &lhs_quant_pack_qsi8d32pb8scalef32sum_f32_avx2, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemv};

}  // namespace qmm
