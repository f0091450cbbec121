// The K-quant GEMVs' own super-block steps (one LHS row, mr = 1), for x86_qloops.h's gemv loop,
// over any vector type with vpdpbusd (V::dpbusd) and a bit-select (V::bitselect):
// avx512::Zmm and its ymm twin avx512::Ymm16, avxvnni::Ymm, and for AVX2 a Ymm whose dpbusd is
// vpmaddubsw + vpmaddwd + vpaddd (exact here: every level fits vpmaddubsw without saturation).
// They read the same packed layouts as x86_kblocks.h's VnniQ6K / x86_qloops.h's VnniQ4K
// (kernels/ref/rhs_pack_nxk_kquants.h), which the GEMMs keep (the AMX GEMMs give the AVX-512
// VNNI GEMMs' bits). Decode is the weights streamed once from DRAM, and a GEMV that spends
// fewer instructions per byte keeps closer to the read (the AVX-512 Q6_K GEMV at 86-91 % of a
// paired plain read before these steps, Q4_0's at 93 %): so fewer instructions per super-block
// than the GEMM's block, at the price of F32 sums in another order (within the reference
// tolerance; GEMVs over one layout and ISA still give each other's bits: the same operations
// per lane in the same order, and every integer sum exact).
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm::x86q {
namespace {

// Q6_K's zero points of one LHS row's super-block (8 blocks from a): z[16·(2H + g) + 4·b] =
// −32·Σ of the 16 activations of half H of block 4g + b (GemvQ6K reads z[16·q + 4·b] only).
// ymm (AVX2): per block, vpmaddubsw by 32 and vpmaddwd by 1 give 4 sums of 4 per 128-bit half,
// two vphaddd of 4 blocks' sums give each half's totals, one vpermd per 2 values spreads them
// 4 lanes apart. avx512_kgemv.h has the zmm one, with vpdpbusd.
struct Q6KZeroPointsYmm {
  static void fill(const uint8_t* a, int32_t z[64]) {
    const __m256i u32 = _mm256_set1_epi8(32), one = _mm256_set1_epi16(1);
    for (size_t g = 0; g < 2; ++g) {
      __m256i s[4];
      for (size_t b = 0; b < 4; ++b) {
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + (4 * g + b) * x86lhs::kBlockBytes));
        s[b] = _mm256_madd_epi16(_mm256_maddubs_epi16(u32, x), one);
      }
      // Per 128-bit half H: the sums of blocks 4g .. 4g + 3, negated.
      const __m256i t = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3])));
      for (size_t H = 0; H < 2; ++H) {
        for (size_t i = 0; i < 2; ++i) {  // blocks 2i, 2i + 1: lanes 4H + 2i, 4H + 2i + 1
          const int l = static_cast<int>(4 * H + 2 * i);
          const __m256i idx = _mm256_setr_epi32(l, l, l, l, l + 1, l + 1, l + 1, l + 1);
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(z + 16 * (2 * H + g) + 8 * i), _mm256_permutevar8x32_epi32(t, idx));
        }
      }
    }
  }
};

// Q6_K (q6kp) for the GEMV: one super-block per step, the two 32-blocks that share a ql group
// at a time: 4h + P (low nibbles) and 4h + P + 2 (high nibbles). Their levels' bits 4-5 are qh
// bits 2P..2P+1 and 2P+4..2P+5, so one mask of (qh >> 2P) by 0x33 puts the first block's at
// bits 0-1 and the second's at 4-5 with zeros above each; then one bit-select (vpternlogd) per
// level takes bits 0-3 from the nibble and 4-7 from those (shifted left 4 for the first block:
// what a 16-bit shift brings into bits 0-3 is not selected). 11 instructions for 4 level
// vectors where q6k_levels takes 13, and each ql / qh vector is loaded once per pair instead
// of once per block (GCC kept VnniQ6K's common loads across its unrolled blocks on the stack).
// Per 16-weight sub-block the int32 sums start at the zero points (ZeroPoints::fill), so
// they end at Σ(u − 32)·a; t += ((S − Z)·sc)·s_a (the product exact: |S − Z| ≤ 16·32·127,
// |sc| ≤ 128), and acc += t·d once per super-block.
template <class V, class ZeroPoints = Q6KZeroPointsYmm>
struct GemvQ6K {
  static constexpr size_t kNr = kPanel<V>, kStepBlocks = 8, kRhsBlock = kNr * 210;
  static constexpr bool kPrefetchesInStep = true;
  using I = typename V::I;
  using F = typename V::F;

  template <size_t R, size_t C, size_t RL = R>
  static void step(const uint8_t* w, size_t stride, const uint8_t* a, F acc[C][R], size_t pf) {
    static_assert(R == 1 && RL == 1, "the GEMV's step: one LHS row");
    alignas(64) int32_t z[64];
    ZeroPoints::fill(a, z);
    F t[C];
    for (size_t c = 0; c < C; ++c) t[c] = V::zero();
    half<0, C>(w, stride, a, z, t, pf);
    half<1, C>(w, stride, a, z, t, pf);
    for (size_t c = 0; c < C; ++c) acc[c][0] = V::fmadd(t[c], V::load_f16(at<V, 2>(w, stride, c, 208 * kNr)), acc[c][0]);
  }

  // 32-blocks 4h .. 4h + 3 (h a constant: every offset an immediate; with a loop over h GCC
  // kept more pointers than registers).
  template <size_t h, size_t C>
  static void half(const uint8_t* w, size_t stride, const uint8_t* a, const int32_t* z, F t[C], size_t pf) {
    sub_block<h, 0, 0, C>(w, stride, a, z, t, pf);
    sub_block<h, 0, 1, C>(w, stride, a, z, t, pf);
    sub_block<h, 1, 0, C>(w, stride, a, z, t, pf);
    sub_block<h, 1, 1, C>(w, stride, a, z, t, pf);
  }

  // Sub-block H of 32-blocks j0 = 4h + P and j1 = j0 + 2 (chunk vectors 4H .. 4H + 3); with
  // pf != 0, part 4h + 2P + H of 8 of each panel's super-block at +pf is prefetched into L1
  // (_MM_HINT_T0: one super-block ahead in each of the 4 panels, 13 KiB, which L1 holds; the
  // GEMV read ~1.5 % faster from DRAM so than with the L2 hint, alternated, m 1 n 2048 k 8192).
  template <size_t h, size_t P, size_t H, size_t C>
  static void sub_block(const uint8_t* w, size_t stride, const uint8_t* a, const int32_t* z, F t[C], size_t pf) {
    constexpr size_t j0 = 4 * h + P, j1 = j0 + 2;
    // w made opaque: no vector loaded before this point is reused after it (else GCC keeps the
    // qh vectors that the other P's sub-blocks load again on the stack, a store per vector).
    asm("" : "+r"(w));
    if (pf != 0) {
      for (size_t c = 0; c < C; c += kSplit<V>) prefetch_part<kRhsBlock, 8, _MM_HINT_T0>(at<V, 0>(w, stride, c, pf), 4 * h + 2 * P + H);
    }
    const uint8_t* a0 = a + j0 * x86lhs::kBlockBytes;
    const uint8_t* a1 = a + j1 * x86lhs::kBlockBytes;
    const int32_t* zh = z + 16 * (2 * H + h) + 4 * P;
    const I m0f = V::set1_i8(0x0f), m33 = V::set1_i8(0x33);
    const I z0 = V::broadcast4(reinterpret_cast<const uint8_t*>(zh)), z1 = V::broadcast4(reinterpret_cast<const uint8_t*>(zh + 8));
    I s0[C], s1[C];
    for (size_t c = 0; c < C; ++c) {
      s0[c] = z0;
      s1[c] = z1;
    }
    for (size_t v = 4 * H; v < 4 * H + 4; ++v) {
      const I av0 = V::broadcast4(a0 + 4 * v), av1 = V::broadcast4(a1 + 4 * v);
      for (size_t c = 0; c < C; ++c) {
        const uint8_t* sb = at<V, 4>(w, stride, c, 4 * kNr * v);
        const I ql = V::load(sb + (2 * h + P) * 32 * kNr), qh = V::load(sb + (128 + 32 * h) * kNr);
        const I hi = V::and_(P == 0 ? qh : V::srli16(qh, 2), m33);
        s0[c] = V::dpbusd(s0[c], V::bitselect(ql, V::slli16(hi, 4), m0f), av0);
        s1[c] = V::dpbusd(s1[c], V::bitselect(V::srli16(ql, 4), hi, m0f), av1);
      }
    }
    const F sa0 = V::broadcast_f32(a0 + 32), sa1 = V::broadcast_f32(a1 + 32);
    for (size_t c = 0; c < C; ++c) {
      const F sc0 = V::to_f32(V::load_i8_i32(at<V, 1>(w, stride, c, (192 + 2 * j0 + H) * kNr)));
      const F sc1 = V::to_f32(V::load_i8_i32(at<V, 1>(w, stride, c, (192 + 2 * j1 + H) * kNr)));
      t[c] = V::fmadd(V::mul(V::to_f32(s0[c]), sc0), sa0, t[c]);
      t[c] = V::fmadd(V::mul(V::to_f32(s1[c]), sc1), sa1, t[c]);
    }
  }
};


// Q4_K (q4kp) for the GEMV: one super-block per step; the two sub-blocks of a 32-byte group
// at once (the GEMM's VnniQ4K makes one pass per nibble: both at once need 2·C·R accumulators,
// which R = 1 affords), each vector loaded once; and the super-block scales d and dmin wait for
// the end of the super-block: per sub-block j, t += (Σ·sc_j)·s_a (the product exact:
// |Σ| ≤ 32·15·127, sc_j ≤ 63) and t_min += m_j·((−8·Σa)·s_a), then
// acc += t·d + t_min·(dmin/8) once per super-block: 7 instructions per sub-block and panel
// after the dot products where VnniQ4K::finish takes 10 (sc_j·d, m_j·dmin/8 and (sc_j·d)·s_a
// per sub-block). Hint: where the next super-block is prefetched (L2; the zmm GEMV's other
// kind, `..._dpbusdl1`, L1, as x86_qloops.h's kGemvHint for the Q4_0 ones).
template <class V, int Hint = _MM_HINT_T1>
struct GemvQ4K {
  static constexpr size_t kNr = kPanel<V>, kStepBlocks = 8, kRhsBlock = kNr * 148;
  static constexpr bool kPrefetchesInStep = true;
  using I = typename V::I;
  using F = typename V::F;

  template <size_t R, size_t C, size_t RL = R>
  static void step(const uint8_t* w, size_t stride, const uint8_t* a, F acc[C][R], size_t pf) {
    static_assert(R == 1 && RL == 1, "the GEMV's step: one LHS row");
    F t[C], tmin[C];
    for (size_t c = 0; c < C; ++c) t[c] = tmin[c] = V::zero();
#pragma GCC unroll 1
    for (size_t pair = 0; pair < 4; ++pair) group<C>(w, stride, pair, a + 2 * pair * x86lhs::kBlockBytes, t, tmin, pf);
    for (size_t c = 0; c < C; ++c) {
      const F d = V::load_f16(at<V, 2>(w, stride, c, 144 * kNr));
      const F dmin8 = V::mul(V::load_f16(at<V, 2>(w, stride, c, 146 * kNr)), V::set1(0.125f));
      acc[c][0] = V::fmadd(tmin[c], dmin8, V::fmadd(t[c], d, acc[c][0]));
    }
  }

  // Sub-blocks 2·pair (low nibbles of 32-byte group `pair`, LHS block a0) and 2·pair + 1 (high
  // nibbles, the next LHS block); with pf != 0, parts 2·pair and 2·pair + 1 of 8 of each panel's
  // super-block at +pf (the GEMV's next one) are prefetched (into L2, or L1: Hint), one per
  // half of the loop.
  template <size_t C>
  static void group(const uint8_t* w, size_t stride, size_t pair, const uint8_t* a0, F t[C], F tmin[C], size_t pf) {
    const uint8_t* a1 = a0 + x86lhs::kBlockBytes;
    const I m4 = V::set1_i8(0x0f);
    I s0[C], s1[C];
    for (size_t c = 0; c < C; ++c) s0[c] = s1[c] = V::set1_i8(0);
#pragma GCC unroll 8
    for (size_t v = 0; v < 8; ++v) {
      if (pf != 0 && v % 4 == 0) {
        for (size_t c = 0; c < C; c += kSplit<V>) prefetch_part<kRhsBlock, 8, Hint>(at<V, 0>(w, stride, c, pf), 2 * pair + v / 4);
      }
      const I av0 = V::broadcast4(a0 + 4 * v), av1 = V::broadcast4(a1 + 4 * v);
      for (size_t c = 0; c < C; ++c) {
        const I wv = V::load(at<V, 4>(w, stride, c, pair * 32 * kNr + 4 * kNr * v));
        s0[c] = V::dpbusd(s0[c], V::and_(wv, m4), av0);
        s1[c] = V::dpbusd(s1[c], V::and_(V::srli16_4(wv), m4), av1);
      }
    }
    finish<C>(w, stride, 2 * pair, a0, s0, t, tmin);
    finish<C>(w, stride, 2 * pair + 1, a1, s1, t, tmin);
  }

  template <size_t C>
  static void finish(const uint8_t* w, size_t stride, size_t j, const uint8_t* aj, const I s[C], F t[C], F tmin[C]) {
    const F sa = V::broadcast_f32(aj + 32);
    const F nb = V::mul(V::to_f32(V::madd_i16(V::broadcast4(aj + 36), 1)), sa);  // (−8·Σa)·s_a
    for (size_t c = 0; c < C; ++c) {
      const uint8_t* sm = at<V, 1>(w, stride, c, 128 * kNr + 2 * kNr * j);
      t[c] = V::fmadd(V::mul(V::to_f32(s[c]), V::load_u8_f32(sm)), sa, t[c]);
      tmin[c] = V::fmadd(V::load_u8_f32(sm + kNr), nb, tmin[c]);
    }
  }
};

}  // namespace
}  // namespace qmm::x86q
