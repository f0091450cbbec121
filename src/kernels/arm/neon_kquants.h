// The NEON K-quant kernels (Q4_K, Q5_K, Q6_K, IQ4_NL; DotProd GEMV, DotProd GEMM, I8MM GEMM):
// per-type decoders and the three loops, instantiated once per type by the kernel files.
// Internal linkage, as in neon_common.h: each kernel file is compiled for its own ISA.
//
// Packed RHS: the type's packer of kernels/ref/rhs_pack_nxk_kquants.h with the NEON preset
// nr = 8, kr = 8 (8-byte chunks, rows interleaved): a 16-byte load at chunk c, column pair p
// holds bytes 8c..8c+7 of columns 2p and 2p+1. After the nibble decode it is, for 32-block b,
// 8 elements of 2 columns: SMMLA's 2x8 B operand as it stands; for SDOT 4 groups of 4
// (column 2p groups 2v, 2v+1 | column 2p+1 groups 2v, 2v+1).
// Packed LHS: lhs_quant_pack_qsi8d32pscalef16_f32_neon with kr/sr = 4 (kr 8, sr 2): per 32-block
// the mr f16 scales, then group g (4 elements) of rows 0..3 in 16 bytes (mr 4), or the 32 int8
// of the row (mr 1). The LHS has no block sums: Q4_K / Q5_K compute Σa (their min term) with
// SDOT against ones from the int8 already in registers (8 SDOT per 4x8 tile and block next to
// 64 of work in the GEMM, 2 in the GEMV).
//
// A decoder W gives, per panel super-block `sb` (W::kBlocks 32-blocks; IQ4_NL: one block):
//   weights(sb, b, v, p)  int8x16: elements 8v..8v+7 of 32-block b, columns 2p, 2p+1
//   pair(sb, b, v, p, w)  the same for blocks b and b + W::kPairStride from one set of loads
//                         (the two nibbles of a byte; the GEMV decodes in pairs, the GEMMs,
//                         short of registers, block by block)
//   kHalves               1, or 2 for Q6_K (a scale per 16 elements: chunks 2h, 2h+1)
//   isc(sb, b, h, q)      int sub-block scale of half h, columns 4q..4q+3 (kSubScales)
//   d(sb, q)              F32 super-block (IQ4_NL: block) scale, columns 4q..4q+3
//   kMin: m16(sb, b)      Q4_K / Q5_K: the 8 columns' int mins m_b, dmin(sb, q) their scale
// A column's sum is Σ_super d·Σ_b s_a·(Σ_h isc·Σ a·q) − dmin·Σ_b s_a·m_b·Σa.
#pragma once
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/blocks.h"
#include "core/kquants.h"
#include "kernels/arm/neon_common.h"
#include "kernels/arm/neon_qloops.h"
#include "kernels/ukernel.h"

namespace qmm::neon {
namespace {

constexpr size_t kKNr = 8, kKKr = 8;
constexpr size_t kKLhsGemv = kBlock + 2;  // mr 1: f16 scale + 32 int8 per block

// Calls f(std::integral_constant<size_t, b>{}) for b = 0..N-1: the 32-block index is then a
// constant in the loop body, so the decoders' nibble, shift and offset choices fold.
template <size_t N, class F>
inline void for_blocks(F f) {
  [&]<size_t... B>(std::index_sequence<B...>) { (f(std::integral_constant<size_t, B>{}), ...); }(std::make_index_sequence<N>{});
}

// p, hidden from the optimizer: the GEMM tiles read each 32-block's weights through it, so the
// loads of one block are not merged with the next block's (the other nibble of the same bytes),
// which would keep 16 raw vectors live across blocks and spill the accumulators.
inline const uint8_t* opaque(const uint8_t* p) {
  asm volatile("" : "+r"(p));
  return p;
}

inline uint8x16_t kchunk(const uint8_t* sb, size_t c, size_t p) { return vld1q_u8(sb + c * kKKr * kKNr + p * 16); }
inline int8x16_t low4(uint8x16_t v) { return vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0f))); }
inline int8x16_t high4(uint8x16_t v) { return vreinterpretq_s8_u8(vshrq_n_u8(v, 4)); }
inline int8x16_t nibble(uint8x16_t v, bool high) { return high ? high4(v) : low4(v); }
// Q4_K (q4kp) and Q5_K (q5kp): sub-block b is the low (b even) or high nibbles of 32-byte
// group b/2; Q5_K adds bit b of the qh bytes as bit 4. Scales: sc_b, m_b bytes at kSc + 16b
// (+8), d at kD, dmin at kD + 16 (offsets in a panel super-block, nr 8).
template <bool kQ5>
struct AsymKDecoder {
  static constexpr size_t kBlocks = 8, kHalves = 1, kPairStride = 1;
  static constexpr bool kMin = true, kSubScales = true;
  static constexpr size_t kSuperBytes = (kQ5 ? 180 : 148) * kKNr, kSc = (kQ5 ? 160 : 128) * kKNr, kD = kSc + 16 * kKNr;
  static int8x16_t high_bit(const uint8_t* sb, size_t b, size_t v, size_t p) {
    const uint8x16_t h = vshlq_u8(kchunk(sb, 16 + v, p), vdupq_n_s8(static_cast<int8_t>(4 - b)));
    return vreinterpretq_s8_u8(vandq_u8(h, vdupq_n_u8(0x10)));
  }
  static void pair(const uint8_t* sb, size_t b, size_t v, size_t p, int8x16_t w[2]) {
    const uint8x16_t raw = kchunk(sb, 4 * (b / 2) + v, p);
    w[0] = low4(raw);
    w[1] = high4(raw);
    if constexpr (kQ5) {
      w[0] = vorrq_s8(w[0], high_bit(sb, b, v, p));
      w[1] = vorrq_s8(w[1], high_bit(sb, b + 1, v, p));
    }
  }
  static int8x16_t weights(const uint8_t* sb, size_t b, size_t v, size_t p) {
    const int8x16_t q = nibble(kchunk(sb, 4 * (b / 2) + v, p), b % 2);
    if constexpr (kQ5) return vorrq_s8(q, high_bit(sb, b, v, p));
    return q;
  }
  static uint8x16_t sc_m(const uint8_t* sb, size_t b) { return vld1q_u8(sb + kSc + 16 * b); }
  static int32x4_t isc(const uint8_t* sb, size_t b, size_t, size_t q) {
    const uint16x8_t sc = vmovl_u8(vget_low_u8(sc_m(sb, b)));
    return vreinterpretq_s32_u32(q == 0 ? vmovl_u16(vget_low_u16(sc)) : vmovl_high_u16(sc));
  }
  static int16x8_t m16(const uint8_t* sb, size_t b) { return vreinterpretq_s16_u16(vmovl_high_u8(sc_m(sb, b))); }
  static float32x4_t d(const uint8_t* sb, size_t q) { return f16x4_to_f32(sb + kD + 8 * q); }
  static float32x4_t dmin(const uint8_t* sb, size_t q) { return f16x4_to_f32(sb + kD + 16 + 8 * q); }
};
using Q4kDecoder = AsymKDecoder<false>;
using Q5kDecoder = AsymKDecoder<true>;

// Q6_K (q6kp): 32-block b = 4h + t: low 4 bits in ql bytes 64h + 32(t%2) + l (high nibbles for
// t >= 2), 2 high bits at bit 2t of qh byte 32h + l; value − 32. int8 scales per 16 at 192·nr.
struct Q6kDecoder {
  static constexpr size_t kBlocks = 8, kHalves = 2, kPairStride = 2;
  static constexpr bool kMin = false, kSubScales = true;
  static constexpr size_t kSuperBytes = 210 * kKNr, kSc = 192 * kKNr, kD = 208 * kKNr;
  static int8x16_t finish(int8x16_t lo, uint8x16_t qh, size_t t) {
    const uint8x16_t hi = vandq_u8(vshlq_u8(qh, vdupq_n_s8(static_cast<int8_t>(4 - 2 * t))), vdupq_n_u8(0x30));
    return vsubq_s8(vorrq_s8(lo, vreinterpretq_s8_u8(hi)), vdupq_n_s8(32));
  }
  static uint8x16_t ql(const uint8_t* sb, size_t b, size_t v, size_t p) { return kchunk(sb, 8 * (b / 4) + 4 * (b % 2) + v, p); }
  static uint8x16_t qh(const uint8_t* sb, size_t b, size_t v, size_t p) { return kchunk(sb, 16 + 4 * (b / 4) + v, p); }
  static void pair(const uint8_t* sb, size_t b, size_t v, size_t p, int8x16_t w[2]) {
    const uint8x16_t l = ql(sb, b, v, p), h = qh(sb, b, v, p);
    w[0] = finish(low4(l), h, b % 4);
    w[1] = finish(high4(l), h, b % 4 + 2);
  }
  static int8x16_t weights(const uint8_t* sb, size_t b, size_t v, size_t p) {
    return finish(nibble(ql(sb, b, v, p), b % 4 >= 2), qh(sb, b, v, p), b % 4);
  }
  static int32x4_t isc(const uint8_t* sb, size_t b, size_t h, size_t q) {
    uint32_t x;
    std::memcpy(&x, sb + kSc + kKNr * (2 * b + h) + 4 * q, 4);
    return vmovl_s16(vget_low_s16(vmovl_s8(vcreate_s8(x))));
  }
  static float32x4_t d(const uint8_t* sb, size_t q) { return f16x4_to_f32(sb + kD + 8 * q); }
  static int16x8_t m16(const uint8_t*, size_t) { return vdupq_n_s16(0); }
  static float32x4_t dmin(const uint8_t*, size_t) { return vdupq_n_f32(0.0f); }
};

// IQ4_NL (iq4nlp): per block, chunk c of the 16 qs bytes holds elements 8c.. (low nibbles) and
// 16 + 8c.. (high nibbles), code-book indices: one TBL maps them to int8.
struct Iq4nlDecoder {
  static constexpr size_t kBlocks = 1, kHalves = 1, kPairStride = 0;
  static constexpr bool kMin = false, kSubScales = false;
  static constexpr size_t kSuperBytes = 18 * kKNr, kD = 16 * kKNr;
  static int8x16_t weights(const uint8_t* sb, size_t, size_t v, size_t p) {
    return vqtbl1q_s8(vld1q_s8(kIq4nlValues), vreinterpretq_u8_s8(nibble(kchunk(sb, v % 2, p), v >= 2)));
  }
  static void pair(const uint8_t*, size_t, size_t, size_t, int8x16_t*) {}
  static int32x4_t isc(const uint8_t*, size_t, size_t, size_t) { return vdupq_n_s32(1); }
  static float32x4_t d(const uint8_t* sb, size_t q) { return f16x4_to_f32(sb + kD + 8 * q); }
  static int16x8_t m16(const uint8_t*, size_t) { return vdupq_n_s16(0); }
  static float32x4_t dmin(const uint8_t*, size_t) { return vdupq_n_f32(0.0f); }
};

// F32 factor of a 32-block's int sums per column (d·sc, or d where the sums carry the int
// scales or there are none), and of its Σa (dmin·m), columns 4q..4q+3.
template <class W>
inline float32x4_t col_scale(const uint8_t* sb, size_t b, size_t q) {
  if constexpr (W::kSubScales && W::kHalves == 1) return vmulq_f32(W::d(sb, q), vcvtq_f32_s32(W::isc(sb, b, 0, q)));
  return W::d(sb, q);
}
template <class W>
inline float32x4_t col_min(const uint8_t* sb, size_t b, size_t q) {
  const int16x8_t m = W::m16(sb, b);
  return vmulq_f32(W::dmin(sb, q), vcvtq_f32_s32(q == 0 ? vmovl_s16(vget_low_s16(m)) : vmovl_high_s16(m)));
}

// --- DotProd GEMV: one row, 8 columns; activations replicated by 8-byte LD1R, two partial
// lanes per column folded by ADDP. Blocks in pairs sharing the weight loads (W::pair); the
// int sums times s_a are summed per super-block, d and dmin applied once per super-block. ---
template <class W>
void dot_panel_k(size_t blocks, const uint8_t* lhs, const uint8_t* rhs, float32x4_t* c0, float32x4_t* c1) {
  constexpr size_t kG = W::kPairStride ? 2 : 1, kS = W::kPairStride ? W::kPairStride : 1;
  float32x4_t c[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  for (size_t s = 0; s < blocks / W::kBlocks; ++s, rhs += W::kSuperBytes, lhs += W::kBlocks * kKLhsGemv) {
    float32x4_t sacc[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}, smin[2] = {sacc[0], sacc[1]};
    for_blocks<W::kBlocks / kG>([&](auto ic) {
      constexpr size_t b0 = ic / kS * 2 * kS + ic % kS;  // blocks b0, b0 + kS
      int8x16_t a[kG][4];
      for (size_t g = 0; g < kG; ++g) {
        for (size_t v = 0; v < 4; ++v) a[g][v] = load_dup8(lhs + (b0 + g * kS) * kKLhsGemv + 2 + 8 * v);
      }
      int32x4_t isum[kG][2];
      for (size_t h = 0; h < W::kHalves; ++h) {
        int32x4_t acc[kG][4];
        for (size_t g = 0; g < kG; ++g) {
          for (size_t p = 0; p < 4; ++p) acc[g][p] = vdupq_n_s32(0);
        }
        for (size_t v = 4 / W::kHalves * h; v < 4 / W::kHalves * (h + 1); ++v) {
          for (size_t p = 0; p < 4; ++p) {
            int8x16_t w[2];
            if constexpr (kG == 2) {
              W::pair(rhs, b0, v, p, w);
            } else {
              w[0] = W::weights(rhs, b0, v, p);
            }
            for (size_t g = 0; g < kG; ++g) acc[g][p] = vdotq_s32(acc[g][p], w[g], a[g][v]);
          }
        }
        for (size_t g = 0; g < kG; ++g) {
          for (size_t q = 0; q < 2; ++q) {
            int32x4_t f = vpaddq_s32(acc[g][2 * q], acc[g][2 * q + 1]);
            if constexpr (W::kSubScales) f = vmulq_s32(f, W::isc(rhs, b0 + g * kS, h, q));
            isum[g][q] = h == 0 ? f : vaddq_s32(isum[g][q], f);
          }
        }
      }
      for (size_t g = 0; g < kG; ++g) {
        const uint8_t* la = lhs + (b0 + g * kS) * kKLhsGemv;
        const float s_a = f16_to_f32(la);
        for (size_t q = 0; q < 2; ++q) sacc[q] = vfmaq_n_f32(sacc[q], vcvtq_f32_s32(isum[g][q]), s_a);
        if constexpr (W::kMin) {
          const int8x16_t ones = vdupq_n_s8(1);
          const int32x4_t as = vdotq_s32(vdotq_s32(vdupq_n_s32(0), load_s8(la + 2), ones), load_s8(la + 18), ones);
          const int16_t asum = static_cast<int16_t>(vaddvq_s32(as));  // |Σa| <= 32·127
          const int16x8_t m = W::m16(rhs, b0 + g * kS);
          smin[0] = vfmaq_n_f32(smin[0], vcvtq_f32_s32(vmull_n_s16(vget_low_s16(m), asum)), s_a);
          smin[1] = vfmaq_n_f32(smin[1], vcvtq_f32_s32(vmull_high_n_s16(m, asum)), s_a);
        }
      }
    });
    for (size_t q = 0; q < 2; ++q) {
      c[q] = vfmaq_f32(c[q], sacc[q], W::d(rhs, q));
      if constexpr (W::kMin) c[q] = vfmsq_f32(c[q], smin[q], W::dmin(rhs, q));
    }
  }
  *c0 = c[0];
  *c1 = c[1];
}

// isum[8] of one 32-block for the GEMM tiles: Add(ia, v) accumulates chunk v into ia; with two
// halves (Q6_K) Fold(isum, ia, h) adds each half times its int scales.
template <class W, class Add, class Fold>
inline void block_isums(int32x4_t isum[8], Add add, Fold fold) {
  for (size_t j = 0; j < 8; ++j) isum[j] = vdupq_n_s32(0);
  for (size_t h = 0; h < W::kHalves; ++h) {
    int32x4_t ia[8];
    for (size_t j = 0; j < 8; ++j) ia[j] = vdupq_n_s32(0);
    for (size_t i = 4 / W::kHalves * h; i < 4 / W::kHalves * (h + 1); ++i) {
      // IQ4_NL: chunk v % 2 holds v (low nibbles) and v + 2 (high): 0, 2, 1, 3 uses each load at once.
      add(ia, W::kBlocks == 1 ? i % 2 * 2 + i / 2 : i);
    }
    if constexpr (W::kHalves == 1) {
      for (size_t j = 0; j < 8; ++j) isum[j] = ia[j];
    } else {
      fold(isum, ia, h);
    }
  }
}

// Per-column (lane j % 4 of sc[j / 4]) helpers of the DotProd GEMM tile (lane indices must be
// constants).
inline void mla_by_column(int32x4_t isum[8], const int32x4_t ia[8], const int32x4_t sc[2]) {
  for (size_t q = 0; q < 2; ++q) {
    isum[4 * q] = vmlaq_laneq_s32(isum[4 * q], ia[4 * q], sc[q], 0);
    isum[4 * q + 1] = vmlaq_laneq_s32(isum[4 * q + 1], ia[4 * q + 1], sc[q], 1);
    isum[4 * q + 2] = vmlaq_laneq_s32(isum[4 * q + 2], ia[4 * q + 2], sc[q], 2);
    isum[4 * q + 3] = vmlaq_laneq_s32(isum[4 * q + 3], ia[4 * q + 3], sc[q], 3);
  }
}
// acc[j] += isum[j] · s_a · sc_j
inline void scale_columns(float32x4_t acc[8], const int32x4_t isum[8], float32x4_t s_a, const float32x4_t sc[2]) {
  for (size_t q = 0; q < 2; ++q) {
    acc[4 * q] = vfmaq_f32(acc[4 * q], vcvtq_f32_s32(isum[4 * q]), vmulq_laneq_f32(s_a, sc[q], 0));
    acc[4 * q + 1] = vfmaq_f32(acc[4 * q + 1], vcvtq_f32_s32(isum[4 * q + 1]), vmulq_laneq_f32(s_a, sc[q], 1));
    acc[4 * q + 2] = vfmaq_f32(acc[4 * q + 2], vcvtq_f32_s32(isum[4 * q + 2]), vmulq_laneq_f32(s_a, sc[q], 2));
    acc[4 * q + 3] = vfmaq_f32(acc[4 * q + 3], vcvtq_f32_s32(isum[4 * q + 3]), vmulq_laneq_f32(s_a, sc[q], 3));
  }
}
// acc[j] −= t · mn_j
inline void subtract_columns(float32x4_t acc[8], float32x4_t t, const float32x4_t mn[2]) {
  for (size_t q = 0; q < 2; ++q) {
    acc[4 * q] = vfmsq_laneq_f32(acc[4 * q], t, mn[q], 0);
    acc[4 * q + 1] = vfmsq_laneq_f32(acc[4 * q + 1], t, mn[q], 1);
    acc[4 * q + 2] = vfmsq_laneq_f32(acc[4 * q + 2], t, mn[q], 2);
    acc[4 * q + 3] = vfmsq_laneq_f32(acc[4 * q + 3], t, mn[q], 3);
  }
}

// --- DotProd GEMM, 4x8 tile: acc[j] = column j, rows 0..3 in the lanes; lane-indexed SDOT
// with the weight register as the indexed operand (4 per register), the LHS groups as loaded. ---
template <class W>
void tile_dotprod_k(size_t blocks, const uint8_t* lhs, const uint8_t* rhs, float32x4_t acc[8]) {
  for (size_t j = 0; j < 8; ++j) acc[j] = vdupq_n_f32(0.0f);
  for (size_t s = 0; s < blocks / W::kBlocks; ++s, rhs += W::kSuperBytes, lhs += W::kBlocks * kQLhsBlock) {
    for_blocks<W::kBlocks>([&](auto bc) {
      constexpr size_t b = bc;
      const uint8_t* lb = lhs + b * kQLhsBlock;
      const uint8_t* rb = W::kBlocks > 1 ? opaque(rhs) : rhs;  // IQ4_NL: one block, nothing to merge
      int32x4_t isum[8], as = vdupq_n_s32(0);
      auto add = [&](int32x4_t ia[8], size_t v) {  // groups 2v, 2v+1 of the 4 rows
        const int8x16_t a0 = load_s8(lb + 8 + 32 * v), a1 = load_s8(lb + 24 + 32 * v);
        for (size_t p = 0; p < 4; ++p) {
          const int8x16_t w = W::weights(rb, b, v, p);
          ia[2 * p] = vdotq_laneq_s32(ia[2 * p], a0, w, 0);
          ia[2 * p] = vdotq_laneq_s32(ia[2 * p], a1, w, 1);
          ia[2 * p + 1] = vdotq_laneq_s32(ia[2 * p + 1], a0, w, 2);
          ia[2 * p + 1] = vdotq_laneq_s32(ia[2 * p + 1], a1, w, 3);
        }
        if constexpr (W::kMin) as = vdotq_s32(vdotq_s32(as, a0, vdupq_n_s8(1)), a1, vdupq_n_s8(1));
      };
      auto fold = [&](int32x4_t is[8], const int32x4_t ia[8], size_t h) {
        const int32x4_t sc[2] = {W::isc(rb, b, h, 0), W::isc(rb, b, h, 1)};
        mla_by_column(is, ia, sc);
      };
      block_isums<W>(isum, add, fold);
      const float32x4_t s_a = f16x4_to_f32(lb);
      const float32x4_t sc[2] = {col_scale<W>(rb, b, 0), col_scale<W>(rb, b, 1)};
      scale_columns(acc, isum, s_a, sc);
      if constexpr (W::kMin) {
        const float32x4_t mn[2] = {col_min<W>(rb, b, 0), col_min<W>(rb, b, 1)};
        subtract_columns(acc, vmulq_f32(vcvtq_f32_s32(as), s_a), mn);
      }
    });
  }
}

// (x[2h], x[2h+1], x[2h], x[2h+1]) of an int vector (the column pattern of a 2x2 SMMLA block).
inline int32x4_t dup_pair_s32(int32x4_t x, int h) {
  const int64x2_t d = vreinterpretq_s64_s32(x);
  return vreinterpretq_s32_s64(h == 0 ? vdupq_laneq_s64(d, 0) : vdupq_laneq_s64(d, 1));
}

// --- I8MM GEMM, 4x8 tile of 2x2 SMMLA blocks: acc[4h + p] = rows 2h, 2h+1 x columns 2p, 2p+1.
// The A operand (2 rows x 8 elements) is ZIP1/ZIP2 (32-bit) of two LHS groups; the row sums
// of the min term are SMMLA against ones, in the 2x2 pattern already. ---
template <class W>
void tile_i8mm_k(size_t blocks, const uint8_t* lhs, const uint8_t* rhs, float32x4_t acc[8]) {
  for (size_t j = 0; j < 8; ++j) acc[j] = vdupq_n_f32(0.0f);
  for (size_t s = 0; s < blocks / W::kBlocks; ++s, rhs += W::kSuperBytes, lhs += W::kBlocks * kQLhsBlock) {
    for_blocks<W::kBlocks>([&](auto bc) {
      constexpr size_t b = bc;
      const uint8_t* lb = lhs + b * kQLhsBlock;
      const uint8_t* rb = W::kBlocks > 1 ? opaque(rhs) : rhs;  // IQ4_NL: one block, nothing to merge
      int32x4_t isum[8], as[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
      auto add = [&](int32x4_t ia[8], size_t v) {  // elements 8v..8v+7: x[h] = rows 2h, 2h+1
        const int32x4_t g0 = vreinterpretq_s32_u8(vld1q_u8(lb + 8 + 32 * v));
        const int32x4_t g1 = vreinterpretq_s32_u8(vld1q_u8(lb + 24 + 32 * v));
        const int8x16_t x[2] = {vreinterpretq_s8_s32(vzip1q_s32(g0, g1)), vreinterpretq_s8_s32(vzip2q_s32(g0, g1))};
        for (size_t p = 0; p < 4; ++p) {
          const int8x16_t w = W::weights(rb, b, v, p);
          ia[p] = vmmlaq_s32(ia[p], x[0], w);
          ia[4 + p] = vmmlaq_s32(ia[4 + p], x[1], w);
        }
        if constexpr (W::kMin) {
          for (size_t h = 0; h < 2; ++h) as[h] = vmmlaq_s32(as[h], x[h], vdupq_n_s8(1));
        }
      };
      auto fold = [&](int32x4_t is[8], const int32x4_t ia[8], size_t h) {
        const int32x4_t sc[2] = {W::isc(rb, b, h, 0), W::isc(rb, b, h, 1)};
        for (size_t j = 0; j < 8; ++j) is[j] = vmlaq_s32(is[j], ia[j], dup_pair_s32(sc[j % 4 / 2], j % 2));
      };
      block_isums<W>(isum, add, fold);
      const float32x4_t s_a = f16x4_to_f32(lb);
      const float32x4_t sl[2] = {vzip1q_f32(s_a, s_a), vzip2q_f32(s_a, s_a)};
      const float32x4_t sc[2] = {col_scale<W>(rb, b, 0), col_scale<W>(rb, b, 1)};
      for (size_t j = 0; j < 8; ++j) {
        acc[j] = vfmaq_f32(acc[j], vcvtq_f32_s32(isum[j]), vmulq_f32(sl[j / 4], dup_pair(sc[j % 4 / 2], j % 2)));
      }
      if constexpr (W::kMin) {
        const float32x4_t mn[2] = {col_min<W>(rb, b, 0), col_min<W>(rb, b, 1)};
        for (size_t j = 0; j < 8; ++j) {
          const float32x4_t t = vmulq_f32(vcvtq_f32_s32(as[j / 4]), sl[j / 4]);
          acc[j] = vfmsq_f32(acc[j], t, dup_pair(mn[j % 4 / 2], j % 2));
        }
      }
    });
  }
}

// The GEMM entry points (the tile loop is neon_qloops.h's; kPanelBlock = bytes per 32-block of
// an 8-column panel).
template <class W>
void run_dotprod_k(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                   size_t dst_stride, float clamp_min, float clamp_max) {
  run_4x8<tile_dotprod_k<W>, rows_dotprod, W::kSuperBytes / W::kBlocks>(m, n, k, lhs_packed, rhs_packed, dst,
                                                                        dst_stride, clamp_min, clamp_max);
}
template <class W>
void run_gemv_k(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                size_t dst_stride, float clamp_min, float clamp_max) {
  run_1x8<dot_panel_k<W>, W::kSuperBytes / W::kBlocks>(m, n, k, lhs_packed, rhs_packed, dst, dst_stride, clamp_min,
                                                       clamp_max);
}
template <class W>
void run_i8mm_k(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                size_t dst_stride, float clamp_min, float clamp_max) {
  run_4x8<tile_i8mm_k<W>, rows_i8mm, W::kSuperBytes / W::kBlocks>(m, n, k, lhs_packed, rhs_packed, dst,
                                                                  dst_stride, clamp_min, clamp_max);
}

inline TileParams gemm_params_k(size_t) { return {kQMr, kKNr, kKKr, 2, kQMr, kKNr}; }
inline TileParams gemv_params_k(size_t) { return {1, kKNr, kKKr, 2, 1, kKNr}; }

}  // namespace
}  // namespace qmm::neon
