// The Q5_K, Q6_K and IQ4_NL blocks of the x86 kernels, written once over a vector type V as
// x86_qloops.h's VNNI blocks are (avx2::Ymm, avxvnni::Ymm, avx512::Zmm), for its GEMM / GEMV
// loops. They read the packed layouts of kernels/ref/rhs_pack_nxk_kquants.h (one 32-bit lane
// per column: a vector load is one 4-byte chunk of nr rows). Each type's decode (packed bytes
// -> unsigned levels) is one small helper; the blocks around it add the products with dot4
// (vpdpbusd, or vpmaddubsw + vpmaddwd on AVX2) and apply the scales.
// Internal linkage: files built for different ISAs include this (each gets its own copy).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/kquants.h"
#include "kernels/ukernel.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm::x86q {
namespace {

// s + the sum of the 4 u8·s8 products of each 32-bit lane: vpdpbusd where V has it, else
// vpmaddubsw + vpmaddwd by 1 (exact while each pair of products fits int16: u·|a| ≤ 16383,
// so u ≤ 128 for |a| ≤ 127).
template <class V>
inline typename V::I dot4(typename V::I s, typename V::I u, typename V::I a) {
  if constexpr (requires(typename V::I x) { V::dpbusd(x, x, x); }) {
    return V::dpbusd(s, u, a);
  } else {
    return V::add_i32(s, V::madd_i16(V::maddubs(u, a), 1));
  }
}

// Shifts every 16-bit lane by S bits, left for S > 0, right for S < 0.
template <class V, int S>
inline typename V::I shift16(typename V::I x) {
  if constexpr (S > 0) {
    return V::slli16(x, S);
  } else if constexpr (S < 0) {
    return V::srli16(x, -S);
  } else {
    return x;
  }
}

// Q5_K (q5kp): the 5-bit levels (0..31) of chunk vector v of sub-blocks 2P (lo: low nibbles of
// qs group P) and 2P + 1 (hi: high nibbles); bit 4 is bit 2P (2P + 1) of the qh chunk v. The
// 16-bit shifts move no bit across a byte into bit 4 (the mask keeps only that bit).
template <class V, int P>
inline void q5k_levels(const uint8_t* sb, size_t v, typename V::I& lo, typename V::I& hi) {
  constexpr size_t nr = kPanel<V>;
  const typename V::I m4 = V::set1_i8(0x0f), b4 = V::set1_i8(0x10);
  const typename V::I qs = V::load(sb + P * 32 * nr + 4 * nr * v), qh = V::load(sb + 128 * nr + 4 * nr * v);
  lo = V::or_and(qs, m4, V::and_(shift16<V, 4 - 2 * P>(qh), b4));
  hi = V::or_and(V::srli16_4(qs), m4, V::and_(shift16<V, 3 - 2 * P>(qh), b4));
}

// Q5_K (rhs_pack_nxk_q5kp_q5k, nr = V::kLanes): one super-block per step, as VnniQ4K with the
// fifth bit: per sub-block j, dot4 of the levels q (0..31; on AVX2 a pair of products is at
// most 2·31·127) by the activations into int32, then acc += Σ·((d·sc_j)·s_a) and
// acc += (−8·Σa)·((dmin/8·m_j)·s_a). q5kp's sc/m bytes sit 32·nr bytes after q4kp's (qh comes
// between), so VnniQ4K's finish applies at w + 32·nr. One instance per pair of sub-blocks:
// the qh shifts are immediates.
template <class V>
struct Q5K {
  static constexpr size_t kNr = kPanel<V>, kStepBlocks = 8, kRhsBlock = kNr * 180;
  using I = typename V::I;
  using F = typename V::F;

  template <size_t R, size_t C, size_t RL = R>
  static void step(const uint8_t* w, size_t stride, const uint8_t* a, F acc[C][R]) {
    F d[C], dmin8[C];
    for (size_t c = 0; c < C; ++c) {
      d[c] = V::load_f16(at<V, 2>(w, stride, c, 176 * kNr));
      dmin8[c] = V::mul(V::load_f16(at<V, 2>(w, stride, c, 178 * kNr)), V::set1(0.125f));
    }
    float nb[kMinFactors<RL>];
    super_block_min_factors<RL>(a, nb);
    pair<0, R, C, RL>(w, stride, a, d, dmin8, nb, acc);
    pair<1, R, C, RL>(w, stride, a, d, dmin8, nb, acc);
    pair<2, R, C, RL>(w, stride, a, d, dmin8, nb, acc);
    pair<3, R, C, RL>(w, stride, a, d, dmin8, nb, acc);
  }

  // Sub-blocks 2P and 2P + 1.
  template <int P, size_t R, size_t C, size_t RL>
  static void pair(const uint8_t* w, size_t stride, const uint8_t* a, const F d[C], const F dmin8[C], const float* nb,
                   F acc[C][R]) {
    const uint8_t* a0 = a + 2 * P * RL * x86lhs::kBlockBytes;
    const uint8_t* a1 = a0 + RL * x86lhs::kBlockBytes;
    I s0[C][R], s1[C][R];
    for (size_t c = 0; c < C; ++c)
      for (size_t r = 0; r < R; ++r) s0[c][r] = s1[c][r] = V::set1_i8(0);
#pragma GCC unroll 1
    for (size_t v = 0; v < 8; ++v) {
      I lo[C], hi[C];
      for (size_t c = 0; c < C; ++c) q5k_levels<V, P>(at<V, 4>(w, stride, c, 0), v, lo[c], hi[c]);
      for (size_t r = 0; r < R; ++r) {
        const I av0 = V::broadcast4(a0 + 4 * RL * v + 4 * r), av1 = V::broadcast4(a1 + 4 * RL * v + 4 * r);
        for (size_t c = 0; c < C; ++c) {
          s0[c][r] = dot4<V>(s0[c][r], lo[c], av0);
          s1[c][r] = dot4<V>(s1[c][r], hi[c], av1);
        }
      }
    }
    VnniQ4K<V>::template finish<R, C, RL>(w + 32 * kNr, stride, 2 * P, a0, d, dmin8, nb + 2 * P * RL, s0, acc);
    VnniQ4K<V>::template finish<R, C, RL>(w + 32 * kNr, stride, 2 * P + 1, a1, d, dmin8, nb + (2 * P + 1) * RL, s1,
                                         acc);
  }
};

// Q6_K's zero points: for 16-weight half H of a 32-block (chunks 4H .. 4H + 3) of the RL rows
// of an LHS block aj, z[r] = −32·Σa of row r, once per row tile instead of once per row and
// column panel (a 4-byte broadcast dot product per chunk and row cost the GEMMs a third more
// dot products). kInt32: z as int32 (the start of a vpdpbusd sum); else as the int16 pair
// vpmaddubsw fills (−32·Σ over chunk positions 0-1, 2-3; each |.| <= 32·8·127), the start of
// an int16 sum whose lanes then hold Σ(u − 32)·a exactly. Chunk v of the block is 4·RL bytes,
// row r at 4r: a 32-bit lane i of a load is row i % RL, so the loads' lanes are summed by
// row and then folded to RL lanes.
template <size_t RL, size_t H, bool kInt32>
inline void q6k_zero_points(const uint8_t* aj, int32_t z[RL]) {
  static_assert(RL == 1 || RL == 2 || RL == 4 || RL == 8);
  const uint8_t* p = aj + 16 * RL * H;
  __m128i x;
  if constexpr (RL == 1) {
    x = _mm_maddubs_epi16(_mm_set1_epi8(32), _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else {
    __m256i s = _mm256_setzero_si256();
    for (size_t o = 0; o < 16 * RL; o += 32)
      s = _mm256_add_epi16(s, _mm256_maddubs_epi16(_mm256_set1_epi8(32), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + o))));
    if constexpr (RL == 8) {
      if constexpr (kInt32) s = _mm256_madd_epi16(s, _mm256_set1_epi16(-1));
      if constexpr (!kInt32) s = _mm256_sub_epi16(_mm256_setzero_si256(), s);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(z), s);
      return;
    }
    x = _mm_add_epi16(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  }
  if constexpr (RL <= 2) x = _mm_add_epi16(x, _mm_shuffle_epi32(x, 0x4e));
  if constexpr (RL == 1) x = _mm_add_epi16(x, _mm_shuffle_epi32(x, 0xb1));
  x = kInt32 ? _mm_madd_epi16(x, _mm_set1_epi16(-1)) : _mm_sub_epi16(_mm_setzero_si128(), x);
  int32_t lanes[4];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), x);
  for (size_t r = 0; r < RL; ++r) z[r] = lanes[r];
}

// The zero points of a whole super-block (LHS blocks a ..): z[(2j + H)·RL + r] for 32-block j,
// computed ahead into memory, so the sums start from broadcast loads (computed per 32-block,
// GCC moved them lane by lane out of a register: one more shuffle and broadcast per row).
// The second half's are the whole 32-block's (4 times the LHS's int16 pair −8·Σa) minus the
// first's: exact in int32, and in int16 lanes modulo 2^16 (each lane's value fits).
template <size_t RL, bool kInt32>
inline void q6k_super_block_zero_points(const uint8_t* a, int32_t z[16 * RL]) {
  for (size_t j = 0; j < 8; ++j) {
    const uint8_t* aj = a + j * RL * x86lhs::kBlockBytes;
    int32_t* z0 = z + 2 * j * RL;
    int32_t* z1 = z0 + RL;
    q6k_zero_points<RL, 0, kInt32>(aj, z0);
    if constexpr (RL == 8) {
      const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(aj + 36 * RL));
      const __m256i all = kInt32 ? _mm256_madd_epi16(pairs, _mm256_set1_epi16(4)) : _mm256_slli_epi16(pairs, 2);
      const __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(z0));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(z1), kInt32 ? _mm256_sub_epi32(all, first) : _mm256_sub_epi16(all, first));
    } else if constexpr (RL == 4) {
      const __m128i pairs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(aj + 36 * RL));
      const __m128i all = kInt32 ? _mm_madd_epi16(pairs, _mm_set1_epi16(4)) : _mm_slli_epi16(pairs, 2);
      const __m128i first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(z0));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(z1), kInt32 ? _mm_sub_epi32(all, first) : _mm_sub_epi16(all, first));
    } else {
      q6k_zero_points<RL, 1, kInt32>(aj, z1);
    }
  }
}

// Q6_K (q6kp): the 6-bit levels u = q + 32 (0..63) of chunk vector v of 32-block 4h + T:
// 4 low bits from ql group 2h + T%2 (low nibbles for T < 2), bits 4-5 from bits 2T, 2T+1 of
// qh group h (16-bit shifts: nothing crosses a byte into bits 4-5).
template <class V, size_t T>
inline typename V::I q6k_levels(const uint8_t* sb, size_t h, size_t v) {
  constexpr size_t nr = kPanel<V>;
  const typename V::I ql = V::load(sb + (2 * h + T % 2) * 32 * nr + 4 * nr * v);
  const typename V::I qh = V::load(sb + (128 + 32 * h) * nr + 4 * nr * v);
  const typename V::I low = T >= 2 ? V::srli16_4(ql) : ql;
  const typename V::I high = V::and_(shift16<V, 4 - 2 * static_cast<int>(T)>(qh), V::set1_i8(0x30));
  return V::or_and(low, V::set1_i8(0x0f), high);
}

// Q6_K (rhs_pack_nxk_q6kp_q6k) for vpdpbusd: one super-block per step, structured as the
// AVX2 kernel's (matmul_clamp_f32_qsi8d32p_q6kp_avx2.cpp): the four 32-blocks of each
// 128-weight half unrolled (the qh shifts are immediates), d applied once per super-block,
// the L2 prefetches of the next super-block spread over the 32-blocks. Per 16-weight
// sub-block, S = Σu·a (int32) minus the zero point Z = Σ32·a (the sums start at −Z, computed
// once per super-block for all rows of the tile by q6k_super_block_zero_points). The int8 scales are applied in F32 without vpmulld:
// |S − Z| ≤ 16·32·127 and |sc| ≤ 128, so each product is below 2^23 and the sum of the two
// sub-blocks' below 2^24: exact, as the int32 products were. The GEMM tiles take
// kSpreadPrefetch = false (the loop's prefetch per super-block): the in-step prefetches, only
// needed by the last row tile, cost the compute-bound tiles ~25 % (4096 x 4096, m = 64).
template <class V, bool kSpreadPrefetch = true>
struct VnniQ6K {
  static constexpr size_t kNr = kPanel<V>, kStepBlocks = 8, kRhsBlock = kNr * 210;
  static constexpr bool kPrefetchesInStep = kSpreadPrefetch;
  using I = typename V::I;
  using F = typename V::F;

  template <size_t R, size_t C, size_t RL = R>
  static void step(const uint8_t* w, size_t stride, const uint8_t* a, F acc[C][R], size_t pf = 0) {
    F t[C][R];  // Σ over the 32-blocks of the exact per-block sums × s_a
    for (size_t c = 0; c < C; ++c)
      for (size_t r = 0; r < R; ++r) t[c][r] = V::zero();
    int32_t z[16 * RL];
    q6k_super_block_zero_points<RL, true>(a, z);
#pragma GCC unroll 1
    for (size_t h = 0; h < 2; ++h) {  // 32-blocks 4h .. 4h + 3
      block<0, R, C, RL>(w, stride, a, h, z, t, pf);
      block<1, R, C, RL>(w, stride, a, h, z, t, pf);
      block<2, R, C, RL>(w, stride, a, h, z, t, pf);
      block<3, R, C, RL>(w, stride, a, h, z, t, pf);
    }
    for (size_t c = 0; c < C; ++c) {
      const F d = V::load_f16(at<V, 2>(w, stride, c, 208 * kNr));
      for (size_t r = 0; r < R; ++r) acc[c][r] = V::fmadd(t[c][r], d, acc[c][r]);
    }
  }

  // 32-block j = 4h + T; with pf != 0, part j of 8 of each panel's super-block at +pf is
  // prefetched into L2.
  template <size_t T, size_t R, size_t C, size_t RL>
  static void block(const uint8_t* w, size_t stride, const uint8_t* a, size_t h, const int32_t* z, F t[C][R],
                    size_t pf) {
    const size_t j = 4 * h + T;
    if (pf != 0) {
      for (size_t c = 0; c < C; c += kSplit<V>) prefetch_part<kRhsBlock, 8>(at<V, 0>(w, stride, c, pf), j);
    }
    const uint8_t* aj = a + j * RL * x86lhs::kBlockBytes;
    F sum[C][R];
    sub_block<T, 0, R, C, RL>(w, stride, h, j, aj, z + 2 * j * RL, sum);
    sub_block<T, 1, R, C, RL>(w, stride, h, j, aj, z + (2 * j + 1) * RL, sum);
    for (size_t r = 0; r < R; ++r) {
      const F sa = V::broadcast_f32(aj + 32 * RL + 4 * r);
      for (size_t c = 0; c < C; ++c) t[c][r] = V::fmadd(sum[c][r], sa, t[c][r]);
    }
  }

  // Sub-block H of 32-block j (chunk vectors 4H .. 4H + 3), one at a time (fewer live
  // registers: AVX-VNNI has 16): the sums start at the zero points z, so they end at
  // S − Z; sum = (S − Z)·sc, plus the first sub-block's for H = 1.
  template <size_t T, size_t H, size_t R, size_t C, size_t RL>
  static void sub_block(const uint8_t* w, size_t stride, size_t h, size_t j, const uint8_t* aj, const int32_t z[RL],
                        F sum[C][R]) {
    I s[C][R];
    for (size_t r = 0; r < R; ++r) {
      const I zr = V::broadcast4(reinterpret_cast<const uint8_t*>(z + r));
      for (size_t c = 0; c < C; ++c) s[c][r] = zr;
    }
    for (size_t v = 4 * H; v < 4 * H + 4; ++v) {
      I u[C];
      for (size_t c = 0; c < C; ++c) u[c] = q6k_levels<V, T>(at<V, 4>(w, stride, c, 0), h, v);
      for (size_t r = 0; r < R; ++r) {
        const I av = V::broadcast4(aj + 4 * RL * v + 4 * r);
        for (size_t c = 0; c < C; ++c) s[c][r] = V::dpbusd(s[c][r], u[c], av);
      }
    }
    F sc[C];
    for (size_t c = 0; c < C; ++c) sc[c] = V::to_f32(V::load_i8_i32(at<V, 1>(w, stride, c, (192 + 2 * j + H) * kNr)));
    for (size_t r = 0; r < R; ++r) {
      for (size_t c = 0; c < C; ++c) {
        const F x = V::to_f32(s[c][r]);
        sum[c][r] = H == 0 ? V::mul(x, sc[c]) : V::fmadd(x, sc[c], sum[c][r]);
      }
    }
  }
};

// The IQ4_NL code book as vpshufb tables: kIq4nlValues + offset as bytes (offset 0: the signed
// values; 128: 1..241, unsigned for vpdpbusd).
template <int kOffset>
struct Iq4nlTable {
  static constexpr uint8_t bytes[16] = {
      static_cast<uint8_t>(kIq4nlValues[0] + kOffset),  static_cast<uint8_t>(kIq4nlValues[1] + kOffset),
      static_cast<uint8_t>(kIq4nlValues[2] + kOffset),  static_cast<uint8_t>(kIq4nlValues[3] + kOffset),
      static_cast<uint8_t>(kIq4nlValues[4] + kOffset),  static_cast<uint8_t>(kIq4nlValues[5] + kOffset),
      static_cast<uint8_t>(kIq4nlValues[6] + kOffset),  static_cast<uint8_t>(kIq4nlValues[7] + kOffset),
      static_cast<uint8_t>(kIq4nlValues[8] + kOffset),  static_cast<uint8_t>(kIq4nlValues[9] + kOffset),
      static_cast<uint8_t>(kIq4nlValues[10] + kOffset), static_cast<uint8_t>(kIq4nlValues[11] + kOffset),
      static_cast<uint8_t>(kIq4nlValues[12] + kOffset), static_cast<uint8_t>(kIq4nlValues[13] + kOffset),
      static_cast<uint8_t>(kIq4nlValues[14] + kOffset), static_cast<uint8_t>(kIq4nlValues[15] + kOffset)};
};

// IQ4_NL (iq4nlp): chunk vector v of a 32-block (elements 4v.. in the low nibbles, 16 + 4v.. in
// the high ones) looked up in `table` (a broadcast Iq4nlTable).
template <class V>
inline void iq4nl_values(typename V::I table, const uint8_t* w, size_t v, typename V::I& lo, typename V::I& hi) {
  const typename V::I m4 = V::set1_i8(0x0f), wv = V::load(w + 4 * kPanel<V> * v);
  lo = V::shuffle_i8(table, V::and_(wv, m4));
  hi = V::shuffle_i8(table, V::and_(V::srli16_4(wv), m4));
}

// IQ4_NL (rhs_pack_nxk_iq4nlp_iq4nl) for vpdpbusd: the values are looked up + 128, so the sums
// start at −128·Σa (the LHS's int16 pair times 16), as VnniQ8's.
template <class V>
struct VnniIq4nl {
  static constexpr size_t kRhsBlock = kPanel<V> * 18, kScaleOffset = 16 * kPanel<V>;
  template <size_t R, size_t C, size_t RL = R>
  static void dot(const uint8_t* w, size_t stride, const uint8_t* a, typename V::I s[C][R]) {
    const typename V::I table = V::broadcast16(Iq4nlTable<128>::bytes);
    for (size_t r = 0; r < R; ++r) {
      const typename V::I zp = V::madd_i16(V::broadcast4(a + 36 * RL + 4 * r), 16);
      for (size_t c = 0; c < C; ++c) s[c][r] = zp;
    }
#pragma GCC unroll 1
    for (size_t v = 0; v < 4; ++v) {
      typename V::I lo[C], hi[C];
      for (size_t c = 0; c < C; ++c) iq4nl_values<V>(table, at<V, 4>(w, stride, c, 0), v, lo[c], hi[c]);
      for (size_t r = 0; r < R; ++r) {
        const typename V::I alo = V::broadcast4(a + 4 * RL * v + 4 * r), ahi = V::broadcast4(a + 4 * RL * (v + 4) + 4 * r);
        for (size_t c = 0; c < C; ++c) s[c][r] = V::dpbusd(V::dpbusd(s[c][r], lo[c], alo), hi[c], ahi);
      }
    }
  }
};

// The GEMM (R-row x C-panel tiles) and GEMV of a kernel file over block type K, and their
// tile parameters (mr R or 1, nr V::kLanes, kr 4, sr 2; m_step = mr, n_step = nr): what each
// file's two Ukernel values point at. The GEMM may take its own block type (KGemm), and its
// few-row path (x86q::gemm, m <= R / 2) another (KFew: the same sums, another prefetch).
template <class V, class K, size_t R, size_t C = 1, class KGemm = K, class KFew = KGemm>
struct Kernels {
  static TileParams gemm_params(size_t) { return {R, V::kLanes, 4, 2, R, V::kLanes}; }
  static TileParams gemv_params(size_t) { return {1, kPanel<V>, 4, 2, 1, kPanel<V>}; }
  static void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride,
                   float lo, float hi) {
    x86q::gemm<V, KGemm, R, C, KFew>(m, n, k, lhs, rhs, dst, stride, lo, hi);
  }
  static void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo,
                   float hi) {
    x86q::gemv<V, K>(n, k, lhs, rhs, dst, lo, hi);
  }
  // The GEMV with its stream prefetched into L1 (x86_qloops.h's kGemvHint: the tuner's other kind).
  static void gemv_l1(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo,
                      float hi) {
    x86q::gemv<V, K, kGemvAhead<V>, kGemvPanels, _MM_HINT_T0>(n, k, lhs, rhs, dst, lo, hi);
  }
  // The GEMM whose few-row streams take gemv_l1's hint (Ukernel::few_rows; the same bits).
  static void gemm_l1(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride,
                      float lo, float hi) {
    x86q::gemm<V, KGemm, R, C, KFew, _MM_HINT_T0>(m, n, k, lhs, rhs, dst, stride, lo, hi);
  }
};

}  // namespace
}  // namespace qmm::x86q
