// SME2 GEMM and GEMV tiles for the K-quants and IQ4_NL (ACLE, clang >= 19), over the packed
// RHS layouts of kernels/ref/rhs_pack_nxk_kquants.h with nr = 4·VL (kr = 4): a 4-byte chunk of
// every row of a panel is 4·nr bytes = four streaming vectors, vector t holding rows
// t·VL..t·VL+VL-1, row r's 4 bytes at 4r: the SMOPA / SDOT operand layout, as for Q4_0.
// Included only by SME2 kernel sources, after sme2_matmul.h (whose panel loops call these).
//
// A weight type W says, per super-block (256 values; IQ4_NL: one 32-block):
//   quad(sb, nr, g, i)  the four int8 vectors of 4-K quad i of scale group g (kGroup values:
//                       32, or 16 for Q6_K); kPaired types decode quads c and c + 4 together
//                       instead (quad_pair)
//   d(sb, nr), scales(sb, nr, g)  d and the integer scale of group g per column (F32; IQ4_NL
//                       has d only: kGroupScales false)
//   kMin, mins, dmin    Q4_K / Q5_K: w = d·sc·q − dmin·m, the min term needs Σ of the LHS
//                       int8 per 32-block (computed here: one SDOT by ones per LHS quad in the
//                       GEMM, SADDV in the GEMV; the LHS packer stays qsi8d32p)
//
// Decoding (instructions per weight vector of a quad, all streaming SVE2):
//   Q4_K   AND #0x0f (low nibbles = even sub-block) or LSR #4 (high = odd sub-block): 1.
//          (LUTI4 would expand a chunk's nibbles interleaved, low/high alternating: with the
//          UZP to split them it costs 2 per vector for both sub-blocks, but one ZA block holds
//          one sub-block at a time, so the nibble ops decode only what is used: 1.)
//   Q5_K   the Q4_K nibble, the qh byte shifted so that bit j lands on bit 4, BSL with 0x10: 3.
//   Q6_K   nibble, qh shifted so that bits 2t..2t+1 land on bits 4..5, BSL with 0x30, SUB 32: 4.
//   IQ4_NL LUTI4 {2 × .B} from ZT0 holding the 16 code-book values, then UZP {2 × .B} splits
//          the interleaved result into the low-nibble quad i and the high-nibble quad i + 4:
//          1 per vector (per pair of steps, 2 instructions give 2 decoded vectors). The GEMV
//          skips the UZP (Iq4nlWeights::gemv_sums): LUTI4 alone, 0.5 per vector.
//
// GEMM tile (1VL × 4VL) in two half passes of 2·VL columns (sme2_matmul.h): per scale group
// ZERO ZA0.S, ZA1.S; per step LD1B the LHS quads (×4), [SDOT by ones], the weight half-quad,
// 2 SMOPA; then za_scale_block adds the group's sums × d·sc (per column) × s_lhs (per row) into
// the F32 sums in ZA2.S, ZA3.S. Q4_K / Q5_K: the min term goes into the same F32 sums, two F32
// FMOPS per group, (s_lhs·Σa) ⊗ (dmin·m_g). dst is written once per tile, clamped.
#pragma once
#include <arm_sme.h>

#include <cstddef>
#include <cstdint>

#include "core/blocks.h"
#include "core/kquants.h"
#include "kernels/arm/sme2_matmul.h"
#include "kernels/ref/layouts_k.h"

namespace qmm::sme2 {

// ---- shared decode helpers -----------------------------------------------------------------

// The four vectors of 4-byte chunk c0 + v of a packed super-block (4·nr bytes), v < 8: one
// base address per c0 and the chunk as the load's immediate (4v vectors), so the unrolled
// quads of a group share one address computation.
__attribute__((always_inline)) inline svuint8x4_t load_chunk(const uint8_t* sb, size_t nr, size_t c0,
                                                             size_t v) __arm_streaming {
  return svld1_vnum_u8_x4(svptrue_c8(), sb + c0 * 4 * nr, static_cast<int64_t>(4 * v));
}

// Half h of that chunk (vectors 2h, 2h + 1: the columns h·2VL..h·2VL + 2VL of a GEMM half pass).
__attribute__((always_inline)) inline svuint8x2_t load_chunk_half(const uint8_t* sb, size_t nr, size_t c0, size_t v,
                                                                  size_t h) __arm_streaming {
  return svld1_vnum_u8_x2(svptrue_c8(), sb + c0 * 4 * nr, static_cast<int64_t>(4 * v + 2 * h));
}

// Low (hi == false) or high nibbles of every byte.
__attribute__((always_inline)) inline svuint8_t nibble(svuint8_t x, bool hi) __arm_streaming {
  return hi ? svlsr_n_u8_x(svptrue_b8(), x, 4) : svand_n_u8_x(svptrue_b8(), x, 0x0f);
}

// x shifted left by s bits (right by −s when s < 0).
__attribute__((always_inline)) inline svuint8_t shift(svuint8_t x, int s) __arm_streaming {
  if (s == 0) return x;
  return s > 0 ? svlsl_n_u8_x(svptrue_b8(), x, static_cast<uint8_t>(s))
               : svlsr_n_u8_x(svptrue_b8(), x, static_cast<uint8_t>(-s));
}

// (hb & mask) | (low & ~mask): the high bits from hb, the rest from low (SVE2 BSL).
__attribute__((always_inline)) inline svuint8_t merge(svuint8_t hb, svuint8_t low, uint8_t mask) __arm_streaming {
  return svbsl_u8(hb, low, svdup_u8(mask));
}

__attribute__((always_inline)) inline svint8x4_t as_s8(svuint8_t a, svuint8_t b, svuint8_t c,
                                                       svuint8_t d) __arm_streaming {
  return svcreate4(svreinterpret_s8(a), svreinterpret_s8(b), svreinterpret_s8(c), svreinterpret_s8(d));
}

// 4·VL bytes at p (one per column of a 4·VL tile), unsigned or signed, as four F32 vectors:
// four widening loads from one base, one multi-vector SCVTF / UCVTF.
__attribute__((always_inline)) inline svfloat32x4_t bytes_f32(const uint8_t* p, bool is_signed) __arm_streaming {
  const svbool_t all = svptrue_b32();
  if (is_signed) {
    const auto* s = reinterpret_cast<const int8_t*>(p);
    return svcvt_f32_s32_x4(svcreate4(svld1sb_vnum_s32(all, s, 0), svld1sb_vnum_s32(all, s, 1),
                                      svld1sb_vnum_s32(all, s, 2), svld1sb_vnum_s32(all, s, 3)));
  }
  return svcvt_f32_u32_x4(svcreate4(svld1ub_vnum_u32(all, p, 0), svld1ub_vnum_u32(all, p, 1),
                                    svld1ub_vnum_u32(all, p, 2), svld1ub_vnum_u32(all, p, 3)));
}

// 2·VL bytes at p (the columns of a half pass) as two F32 vectors.
__attribute__((always_inline)) inline svfloat32x2_t bytes_f32_x2(const uint8_t* p, bool is_signed) __arm_streaming {
  const svbool_t all = svptrue_b32();
  if (is_signed) {
    const auto* s = reinterpret_cast<const int8_t*>(p);
    return svcvt_f32_s32_x2(svcreate2(svld1sb_vnum_s32(all, s, 0), svld1sb_vnum_s32(all, s, 1)));
  }
  return svcvt_f32_u32_x2(svcreate2(svld1ub_vnum_u32(all, p, 0), svld1ub_vnum_u32(all, p, 1)));
}

// 2·VL f16 scales at p -> two F32 vectors.
__attribute__((always_inline)) inline svfloat32x2_t scales_x2(const uint8_t* p) __arm_streaming {
  return svcreate2(load_scales(p), load_scales(p + svcntw() * 2));
}

__attribute__((always_inline)) inline svint8x2_t as_s8_x2(svuint8_t a, svuint8_t b) __arm_streaming {
  return svcreate2(svreinterpret_s8(a), svreinterpret_s8(b));
}

// ---- weight types --------------------------------------------------------------------------

// Q4_K (q4kp) and Q5_K (q5kp): 8 sub-blocks of 32; sub-block j, quad v = chunk 8·(j/2) + v,
// low nibbles for even j, high for odd j; Q5_K's fifth bit is bit j of qh chunk 32 + v.
template <size_t kBytes, size_t kScales, size_t kD, bool kFiveBits>
struct AsymKWeights {
  static constexpr size_t kSuper = kSuperBlock, kGroup = 32;
  static constexpr bool kMin = true, kPaired = false, kGroupScales = true;
  static constexpr size_t kUnroll = kFiveBits ? 8 : 2;  // groups per loop body: the parity (Q5_K: j) constant
  static size_t panel_bytes(size_t nr, size_t k) __arm_streaming_compatible { return nr * (k / kSuper) * kBytes; }
  __attribute__((always_inline)) inline static void load_table() __arm_streaming __arm_preserves("za") __arm_inout("zt0") {}
  __attribute__((always_inline)) inline static svint8x4_t quad(const uint8_t* sb, size_t nr, size_t j,
                                                               size_t v) __arm_streaming {
    const svuint8x4_t q = load_chunk(sb, nr, 8 * (j / 2), v);
    const bool hi = j % 2;
    if constexpr (kFiveBits) {
      const svuint8x4_t h = load_chunk(sb, nr, 32, v);
      const int s = 4 - static_cast<int>(j);
      return as_s8(merge(shift(svget4(h, 0), s), nibble(svget4(q, 0), hi), 0x10),
                   merge(shift(svget4(h, 1), s), nibble(svget4(q, 1), hi), 0x10),
                   merge(shift(svget4(h, 2), s), nibble(svget4(q, 2), hi), 0x10),
                   merge(shift(svget4(h, 3), s), nibble(svget4(q, 3), hi), 0x10));
    } else {
      return as_s8(nibble(svget4(q, 0), hi), nibble(svget4(q, 1), hi), nibble(svget4(q, 2), hi),
                   nibble(svget4(q, 3), hi));
    }
  }
  // The GEMM's half pass h: the two vectors of quad v of group j for columns h·2VL..
  __attribute__((always_inline)) inline static svint8x2_t quad_half(const uint8_t* sb, size_t nr, size_t j, size_t v,
                                                                    size_t h) __arm_streaming {
    const svuint8x2_t q = load_chunk_half(sb, nr, 8 * (j / 2), v, h);
    const bool hi = j % 2;
    if constexpr (kFiveBits) {
      const svuint8x2_t hb = load_chunk_half(sb, nr, 32, v, h);
      const int s = 4 - static_cast<int>(j);
      return as_s8_x2(merge(shift(svget2(hb, 0), s), nibble(svget2(q, 0), hi), 0x10),
                      merge(shift(svget2(hb, 1), s), nibble(svget2(q, 1), hi), 0x10));
    } else {
      return as_s8_x2(nibble(svget2(q, 0), hi), nibble(svget2(q, 1), hi));
    }
  }
  __attribute__((always_inline)) inline static svfloat32x2_t d_half(const uint8_t* sb, size_t nr, size_t h) __arm_streaming {
    return scales_x2(sb + kD * nr + h * svcntw() * 4);
  }
  __attribute__((always_inline)) inline static svfloat32x2_t dmin_half(const uint8_t* sb, size_t nr, size_t h) __arm_streaming {
    return scales_x2(sb + (kD + 2) * nr + h * svcntw() * 4);
  }
  __attribute__((always_inline)) inline static svfloat32x2_t scales_half(const uint8_t* sb, size_t nr, size_t j,
                                                                         size_t h) __arm_streaming {
    return bytes_f32_x2(sb + kScales * nr + 2 * nr * j + h * svcntw() * 2, false);
  }
  __attribute__((always_inline)) inline static svfloat32x2_t mins_half(const uint8_t* sb, size_t nr, size_t j,
                                                                       size_t h) __arm_streaming {
    return bytes_f32_x2(sb + kScales * nr + 2 * nr * j + nr + h * svcntw() * 2, false);
  }
  __attribute__((always_inline)) inline static svfloat32x4_t d(const uint8_t* sb, size_t nr) __arm_streaming {
    return load_scales_x4(sb + kD * nr);
  }
  __attribute__((always_inline)) inline static svfloat32x4_t dmin(const uint8_t* sb, size_t nr) __arm_streaming {
    return load_scales_x4(sb + (kD + 2) * nr);
  }
  __attribute__((always_inline)) inline static svfloat32x4_t scales(const uint8_t* sb, size_t nr,
                                                                    size_t j) __arm_streaming {
    return bytes_f32(sb + kScales * nr + 2 * nr * j, false);
  }
  __attribute__((always_inline)) inline static svfloat32x4_t mins(const uint8_t* sb, size_t nr,
                                                                  size_t j) __arm_streaming {
    return bytes_f32(sb + kScales * nr + 2 * nr * j + nr, false);
  }
};
using Q4KWeights = AsymKWeights<layout::kQ4kpBytes, 128, 144, false>;
using Q5KWeights = AsymKWeights<layout::kQ5kpBytes, 160, 176, true>;

// Q6_K (q6kp): 16 groups of 16. Group g = 32-block (h, t) = (g / 8, g % 8 / 2), half g % 2;
// step v (0..3) holds elements l = 16·(g % 2) + 4v..: ql chunk 16h + 8(t % 2) + l/4 (low nibble
// for t < 2), qh chunk 32 + 8h + l/4 (bits 2t, 2t + 1).
struct Q6KWeights {
  static constexpr size_t kSuper = kSuperBlock, kGroup = 16;
  static constexpr bool kMin = false, kPaired = false, kGroupScales = true;
  static constexpr size_t kUnroll = 8;  // t = g % 8 / 2 constant in the loop body
  static size_t panel_bytes(size_t nr, size_t k) __arm_streaming_compatible { return nr * (k / kSuper) * layout::kQ6kpBytes; }
  __attribute__((always_inline)) inline static void load_table() __arm_streaming __arm_preserves("za") __arm_inout("zt0") {}
  __attribute__((always_inline)) inline static svint8x4_t quad(const uint8_t* sb, size_t nr, size_t g,
                                                               size_t v) __arm_streaming {
    const size_t h = g / 8, t = g % 8 / 2, l4 = 4 * (g % 2) + v;
    const svuint8x4_t ql = load_chunk(sb, nr, 16 * h + 8 * (t % 2), l4);
    const svuint8x4_t qh = load_chunk(sb, nr, 32 + 8 * h, l4);
    const int s = 4 - 2 * static_cast<int>(t);
    const bool hi = t >= 2;
    return as_s8(six_bits(svget4(ql, 0), svget4(qh, 0), hi, s), six_bits(svget4(ql, 1), svget4(qh, 1), hi, s),
                 six_bits(svget4(ql, 2), svget4(qh, 2), hi, s), six_bits(svget4(ql, 3), svget4(qh, 3), hi, s));
  }
  __attribute__((always_inline)) inline static svint8x2_t quad_half(const uint8_t* sb, size_t nr, size_t g, size_t v,
                                                                    size_t half) __arm_streaming {
    const size_t h = g / 8, t = g % 8 / 2, l4 = 4 * (g % 2) + v;
    const svuint8x2_t ql = load_chunk_half(sb, nr, 16 * h + 8 * (t % 2), l4, half);
    const svuint8x2_t qh = load_chunk_half(sb, nr, 32 + 8 * h, l4, half);
    const int s = 4 - 2 * static_cast<int>(t);
    const bool hi = t >= 2;
    return as_s8_x2(six_bits(svget2(ql, 0), svget2(qh, 0), hi, s), six_bits(svget2(ql, 1), svget2(qh, 1), hi, s));
  }
  __attribute__((always_inline)) inline static svfloat32x2_t d_half(const uint8_t* sb, size_t nr, size_t h) __arm_streaming {
    return scales_x2(sb + 208 * nr + h * svcntw() * 4);
  }
  __attribute__((always_inline)) inline static svfloat32x2_t scales_half(const uint8_t* sb, size_t nr, size_t g,
                                                                         size_t h) __arm_streaming {
    return bytes_f32_x2(sb + 192 * nr + nr * g + h * svcntw() * 2, true);
  }
  // nibble | (2 bits of qh moved to bits 4..5), minus 32.
  __attribute__((always_inline)) inline static svuint8_t six_bits(svuint8_t ql, svuint8_t qh, bool hi,
                                                                  int s) __arm_streaming {
    return svsub_n_u8_x(svptrue_b8(), merge(shift(qh, s), nibble(ql, hi), 0x30), 32);
  }
  __attribute__((always_inline)) inline static svfloat32x4_t d(const uint8_t* sb, size_t nr) __arm_streaming {
    return load_scales_x4(sb + 208 * nr);
  }
  __attribute__((always_inline)) inline static svfloat32x4_t scales(const uint8_t* sb, size_t nr,
                                                                    size_t g) __arm_streaming {
    return bytes_f32(sb + 192 * nr + nr * g, true);
  }
};

// IQ4_NL (iq4nlp): one 32-block per "super-block"; chunk c (0..3) holds quads c (low nibbles)
// and c + 4 (high), decoded together: one LUTI4 + UZP per vector gives both.
struct Iq4nlWeights {
  static constexpr size_t kSuper = kBlock, kGroup = kBlock;
  static constexpr bool kMin = false, kPaired = true, kGroupScales = false;  // d only
  static constexpr size_t kUnroll = 1;
  static size_t panel_bytes(size_t nr, size_t k) __arm_streaming_compatible { return nr * (k / kSuper) * layout::kIq4nlpBytes; }
  __attribute__((always_inline)) inline static void load_table() __arm_streaming __arm_preserves("za") __arm_inout("zt0") {
    static const int32_t lut[16] = {kIq4nlValues[0],  kIq4nlValues[1],  kIq4nlValues[2],  kIq4nlValues[3],
                                    kIq4nlValues[4],  kIq4nlValues[5],  kIq4nlValues[6],  kIq4nlValues[7],
                                    kIq4nlValues[8],  kIq4nlValues[9],  kIq4nlValues[10], kIq4nlValues[11],
                                    kIq4nlValues[12], kIq4nlValues[13], kIq4nlValues[14], kIq4nlValues[15]};
    svldr_zt(0, lut);
  }
  // LUTI4 turns byte b's nibbles into bytes 2b (low) and 2b + 1 (high); UZP splits them.
  __attribute__((always_inline)) inline static svint8x2_t lookup(svuint8_t x) __arm_streaming __arm_preserves("za") __arm_in("zt0") {
    return svuzp_s8_x2(svluti4_lane_zt_s8_x2(0, x, 0));
  }
  __attribute__((always_inline)) inline static void quad_pair(const uint8_t* sb, size_t nr, size_t c, svint8x4_t& lo,
                                                              svint8x4_t& hi) __arm_streaming __arm_preserves("za")
      __arm_in("zt0") {
    const svuint8x4_t q = load_chunk(sb, nr, 0, c);
    const svint8x2_t v0 = lookup(svget4(q, 0)), v1 = lookup(svget4(q, 1)), v2 = lookup(svget4(q, 2)),
                     v3 = lookup(svget4(q, 3));
    lo = svcreate4(svget2(v0, 0), svget2(v1, 0), svget2(v2, 0), svget2(v3, 0));
    hi = svcreate4(svget2(v0, 1), svget2(v1, 1), svget2(v2, 1), svget2(v3, 1));
  }
  __attribute__((always_inline)) inline static void quad_pair_half(const uint8_t* sb, size_t nr, size_t c, size_t h,
                                                                   svint8x2_t& lo, svint8x2_t& hi) __arm_streaming
      __arm_preserves("za") __arm_in("zt0") {
    const svuint8x2_t q = load_chunk_half(sb, nr, 0, c, h);
    const svint8x2_t v0 = lookup(svget2(q, 0)), v1 = lookup(svget2(q, 1));
    lo = svcreate2(svget2(v0, 0), svget2(v1, 0));
    hi = svcreate2(svget2(v0, 1), svget2(v1, 1));
  }
  __attribute__((always_inline)) inline static svfloat32x2_t d_half(const uint8_t* sb, size_t nr, size_t h) __arm_streaming {
    return scales_x2(sb + 16 * nr + h * svcntw() * 4);
  }
  __attribute__((always_inline)) inline static svfloat32x2_t scales_half(const uint8_t*, size_t, size_t, size_t) __arm_streaming {
    return svcreate2(svdup_f32(1.0f), svdup_f32(1.0f));  // unused: kGroupScales
  }
  // GEMV: the int32 sums of one 32-block for the 4·VL columns, without the UZP (whose pairs
  // would have to be copied into SDOT's 4-register tuples: 24 MOVs per block). LUTI4 alone
  // leaves row r's 4 bytes as 8 values interleaved low/high, lanes 2r and 2r + 1 of one of the
  // pair's vectors (rows VL/2.. in the second); the LHS gets the same order (ZIP1 of bytes
  // 0..15 with 16..31, 64-bit group c broadcast), so one SDOT by a single vector per two
  // weight vectors adds each row's halves into its two lanes, ZA.S[0, VGx4] for columns
  // 0..2·VL and ZA.S[3, VGx4] for 2·VL..4·VL (ZA.S[1..2, VGx4] hold the GEMV's F32 sums).
  // One UZP + ADD per VL columns then gives the row sums: exactly the int32 sums of quad_pair.
  __attribute__((always_inline)) inline static svint32x4_t gemv_sums(const uint8_t* sb, size_t nr, const uint8_t* lhs)
      __arm_streaming __arm_inout("za") __arm_in("zt0") {
    const svbool_t all8 = svptrue_b8(), all32 = svptrue_b32();
    const auto* a = reinterpret_cast<const int8_t*>(lhs);
    const svint8_t a0 = svld1rq_s8(all8, a), a1 = svld1rq_s8(all8, a + 16);  // replicated per 128 bits
    // Bytes 4c.., 16 + 4c.. interleaved: groups 0, 1 from a[0..15], groups 2, 3 from a rotated by 8.
    const svint64_t g01 = svreinterpret_s64(svzip1(a0, a1));
    const svint64_t g23 = svreinterpret_s64(svzip1(svext(a0, a0, 8), svext(a1, a1, 8)));
#pragma clang loop unroll(full)
    for (size_t c = 0; c < 4; ++c) {
      const svint8_t z = svreinterpret_s8(svdup_lane(c < 2 ? g01 : g23, c % 2));
      const svuint8x4_t q = load_chunk(sb, nr, 0, c);
      const svint8x2_t p0 = svluti4_lane_zt_s8_x2(0, svget4(q, 0), 0), p1 = svluti4_lane_zt_s8_x2(0, svget4(q, 1), 0),
                       p2 = svluti4_lane_zt_s8_x2(0, svget4(q, 2), 0), p3 = svluti4_lane_zt_s8_x2(0, svget4(q, 3), 0);
      svdot_single_za32_s8_vg1x4(0, svcreate4(svget2(p0, 0), svget2(p0, 1), svget2(p1, 0), svget2(p1, 1)), z);
      svdot_single_za32_s8_vg1x4(3, svcreate4(svget2(p2, 0), svget2(p2, 1), svget2(p3, 0), svget2(p3, 1)), z);
    }
    const svint32x4_t r01 = svread_za32_s32_vg1x4(0), r23 = svread_za32_s32_vg1x4(3);
    const svint32x2_t s0 = svuzp_s32_x2(svcreate2(svget4(r01, 0), svget4(r01, 1))),
                      s1 = svuzp_s32_x2(svcreate2(svget4(r01, 2), svget4(r01, 3))),
                      s2 = svuzp_s32_x2(svcreate2(svget4(r23, 0), svget4(r23, 1))),
                      s3 = svuzp_s32_x2(svcreate2(svget4(r23, 2), svget4(r23, 3)));
    return svcreate4(svadd_x(all32, svget2(s0, 0), svget2(s0, 1)), svadd_x(all32, svget2(s1, 0), svget2(s1, 1)),
                     svadd_x(all32, svget2(s2, 0), svget2(s2, 1)), svadd_x(all32, svget2(s3, 0), svget2(s3, 1)));
  }
  __attribute__((always_inline)) inline static svfloat32x4_t d(const uint8_t* sb, size_t nr) __arm_streaming {
    return load_scales_x4(sb + 16 * nr);
  }
  __attribute__((always_inline)) inline static svfloat32x4_t scales(const uint8_t*, size_t, size_t) __arm_streaming {
    return svcreate4(svdup_f32(1.0f), svdup_f32(1.0f), svdup_f32(1.0f), svdup_f32(1.0f));  // unused: kGroupScales
  }};

// SDOT ZA.S[0, VGx4] += w · (quad `lane` of each 128-bit segment of a); lane is 0..3.
__attribute__((always_inline)) inline void dot_lane(svint8x4_t w, svint8_t a, size_t lane) __arm_streaming
    __arm_inout("za") {
  switch (lane) {
    case 0: svdot_lane_za32_s8_vg1x4(0, w, a, 0); break;
    case 1: svdot_lane_za32_s8_vg1x4(0, w, a, 1); break;
    case 2: svdot_lane_za32_s8_vg1x4(0, w, a, 2); break;
    default: svdot_lane_za32_s8_vg1x4(0, w, a, 3); break;
  }
}

// ---- GEMM tile -----------------------------------------------------------------------------

// Two SMOPA: ZA0.S, ZA1.S += av ⊗ wv_t (the GEMM's half pass).
__attribute__((always_inline)) inline void mopa2(svint8_t av, svint8x2_t wv) __arm_streaming __arm_inout("za") {
  const svbool_t all = svptrue_b8();
  svmopa_za32_s8_m(0, all, all, av, svget2(wv, 0));
  svmopa_za32_s8_m(1, all, all, av, svget2(wv, 1));
}

// The tile loops of super-blocked weights (sme2_matmul.h's gemm / gemv call them).
struct KTiles {
// GEMM: sme2_matmul.h's half passes with the F32 sums in ZA2.S, ZA3.S: per scale group the
// int32 sums in ZA0.S, ZA1.S, then za_scale_block with rsc = d·sc (per column). Q4_K / Q5_K's
// min term goes straight into the F32 sums: two FMOPS per group, (s_lhs·Σa) ⊗ (dmin·m_g).
template <class W>
__attribute__((always_inline)) inline static void gemm_tile(size_t rows, svcount_t cols, size_t ncols, size_t k,
                                                            const uint8_t* lhs, const uint8_t* rhs, float* dst,
                                                            size_t stride, float lo, float hi) __arm_streaming
    __arm_inout("za") __arm_in("zt0") {
  constexpr size_t kGroups = W::kSuper / W::kGroup;
  const size_t vl = svcntw(), nr = 4 * vl, supers = k / W::kSuper;
  const svbool_t all32 = svptrue_b32();
  const svcount_t all8c = svptrue_c8();
  const uint8_t* lhs_scales = lhs + vl * k;
  const svfloat32_t vlo = svdup_f32(lo), vhi = svdup_f32(hi);
  if (supers == 0) return gemm_empty(rows, cols, dst, stride, vlo, vhi);
  const svuint32_t regroup = group_rows_index();
  float lsT[64];  // a block's LHS scales, regrouped (VL <= 64)
  for (size_t h = 0; h < 2 && h * 2 * vl < ncols; ++h) {
    svzero_za();
    for (size_t s = 0; s < supers; ++s) {
      const uint8_t* sb = rhs + s * W::panel_bytes(nr, W::kSuper);
      const svfloat32x2_t d = W::d_half(sb, nr, h);
      svfloat32x2_t dm = d;  // dmin per column (Q4_K, Q5_K)
      if constexpr (W::kMin) dm = W::dmin_half(sb, nr, h);
      for (size_t g0 = 0; g0 < kGroups; g0 += W::kUnroll) {
#pragma clang loop unroll(full)
        for (size_t g = g0; g < g0 + W::kUnroll; ++g) {
          const size_t e = s * W::kSuper + g * W::kGroup;  // first K index of the group
          const auto* a = reinterpret_cast<const int8_t*>(lhs + e * vl);
          if (e != 0) svzero_mask_za(0x33);  // ZA0.S, ZA1.S
          svint32_t asum = svdup_s32(0);
          if constexpr (W::kPaired) {  // one chunk gives quads c (low nibbles) and c + 4 (high)
            const svint8x4_t a03 = svld1_s8_x4(all8c, a), a47 = svld1_vnum_s8_x4(all8c, a, 4);
#pragma clang loop unroll(full)
            for (size_t c = 0; c < 4; ++c) {
              svint8x2_t w_lo, w_hi;
              W::quad_pair_half(sb, nr, c, h, w_lo, w_hi);
              mopa2(part(a03, c), w_lo);
              mopa2(part(a47, c), w_hi);
            }
          } else {
#pragma clang loop unroll(full)
            for (size_t i4 = 0; i4 < W::kGroup / 4; i4 += 4) {
              const svint8x4_t av = svld1_vnum_s8_x4(all8c, a, static_cast<int64_t>(i4));
#pragma clang loop unroll(full)
              for (size_t i = 0; i < 4; ++i) {
                if constexpr (W::kMin) asum = svdot_s32(asum, part(av, i), svdup_s8(1));
                mopa2(part(av, i), W::quad_half(sb, nr, g, i4 + i, h));
              }
            }
          }
          const svfloat32_t ls = load_scales(lhs_scales + e / kBlock * vl * 2);
          svst1_f32(all32, lsT, svtbl(ls, regroup));
          if constexpr (W::kGroupScales) {
            const svfloat32x2_t sc = W::scales_half(sb, nr, g, h);
            za_scale_block(svmul_x(all32, svget2(sc, 0), svget2(d, 0)), svmul_x(all32, svget2(sc, 1), svget2(d, 1)), lsT);
          } else {
            za_scale_block(svget2(d, 0), svget2(d, 1), lsT);
          }
          if constexpr (W::kMin) {
            const svfloat32_t la = svmul_x(all32, svcvt_f32_s32_x(all32, asum), ls);
            const svfloat32x2_t m = W::mins_half(sb, nr, g, h);
            svmops_za32_f32_m(2, all32, all32, la, svmul_x(all32, svget2(m, 0), svget2(dm, 0)));
            svmops_za32_f32_m(3, all32, all32, la, svmul_x(all32, svget2(m, 1), svget2(dm, 1)));
          }
        }
      }
    }
    const svcount_t hc = svwhilelt_c32(static_cast<uint64_t>(h * 2 * vl), static_cast<uint64_t>(ncols), 2);
    za_store_half(rows, hc, dst + h * 2 * vl, stride, vlo, vhi);
  }
}

// GEMV: ZA.S[0, VGx4] holds a group's int32 sums; ZA.S[1, VGx4] accumulates Σ_g s_lhs·scale_g ·
// sums_g and ZA.S[2, VGx4] Σ_g m_g · s_lhs·Σa_g (F32, multi-vector FMLA) over a super-block,
// which is then multiplied by d (and dmin) per column into the accumulator registers.
template <class W>
__attribute__((always_inline)) inline static void gemv_row(svcount_t cols, size_t k, const uint8_t* lhs,
                                                           const uint8_t* rhs, float* dst, float lo,
                                                           float hi) __arm_streaming __arm_inout("za") __arm_in("zt0") {
  constexpr size_t kGroups = W::kSuper / W::kGroup, kHalves = W::kGroup / 16;
  const size_t vl = svcntw(), nr = 4 * vl, supers = k / W::kSuper;
  const svbool_t all8 = svptrue_b8(), all32 = svptrue_b32();
  const uint8_t* lhs_scales = lhs + k;
  const svint32_t zero = svdup_s32(0);
  const svfloat32_t fzero = svdup_f32(0.0f);
  svfloat32x4_t acc = svcreate4(fzero, fzero, fzero, fzero);
  for (size_t s = 0; s < supers; ++s) {
    const uint8_t* sb = rhs + s * W::panel_bytes(nr, W::kSuper);
    svzero_za();
    for (size_t g0 = 0; g0 < kGroups; g0 += W::kUnroll) {
#pragma clang loop unroll(full)
      for (size_t g = g0; g < g0 + W::kUnroll; ++g) {
        const size_t e = s * W::kSuper + g * W::kGroup;
        if (g != 0) svwrite_za32_s32_vg1x4(0, svcreate4(zero, zero, zero, zero));
        // 16 LHS bytes per vector, replicated into every 128-bit segment (quads 0..3, 4..7).
        const svint8_t a0 = svld1rq_s8(all8, reinterpret_cast<const int8_t*>(lhs + e));
        const svint8_t a1 = kHalves > 1 ? svld1rq_s8(all8, reinterpret_cast<const int8_t*>(lhs + e + 16)) : a0;
        svint32x4_t isums;
        if constexpr (W::kPaired) {
          isums = W::gemv_sums(sb, nr, lhs + e);
        } else {
#pragma clang loop unroll(full)
          for (size_t i = 0; i < W::kGroup / 4; ++i) dot_lane(W::quad(sb, nr, g, i), i < 4 ? a0 : a1, i % 4);
          isums = svread_za32_s32_vg1x4(0);
        }
        const svfloat32_t ls = lhs_scale_dup(lhs_scales + e / kBlock * 2);
        const svfloat32x4_t sums = to_f32(isums);
        if constexpr (W::kGroupScales) {
          const svfloat32x4_t sc = W::scales(sb, nr, g);
          svmla_za32_f32_vg1x4(1, sums,
                               svcreate4(svmul_x(all32, svget4(sc, 0), ls), svmul_x(all32, svget4(sc, 1), ls),
                                         svmul_x(all32, svget4(sc, 2), ls), svmul_x(all32, svget4(sc, 3), ls)));
        } else {
          svmla_single_za32_f32_vg1x4(1, sums, ls);
        }
        if constexpr (W::kMin) {
          // Σa: SDOT by ones gives 4-byte sums per lane, each 128-bit segment the same, so SADDV
          // counts the block VL/4 times (exact in F32: |Σ| < 2^17).
          const svint32_t s4 = svdot_s32(svdot_s32(zero, a0, svdup_s8(1)), a1, svdup_s8(1));
          const float sum = static_cast<float>(svaddv_s32(all32, s4)) * (4.0f / static_cast<float>(vl));
          svmla_single_za32_f32_vg1x4(2, W::mins(sb, nr, g), svmul_x(all32, ls, svdup_f32(sum)));
        }
      }
    }
    const svfloat32x4_t d = W::d(sb, nr), r = svread_za32_f32_vg1x4(1);
    acc = svcreate4(svmla_x(all32, svget4(acc, 0), svget4(r, 0), svget4(d, 0)),
                    svmla_x(all32, svget4(acc, 1), svget4(r, 1), svget4(d, 1)),
                    svmla_x(all32, svget4(acc, 2), svget4(r, 2), svget4(d, 2)),
                    svmla_x(all32, svget4(acc, 3), svget4(r, 3), svget4(d, 3)));
    if constexpr (W::kMin) {
      const svfloat32x4_t dm = W::dmin(sb, nr), mr = svread_za32_f32_vg1x4(2);
      acc = svcreate4(svmls_x(all32, svget4(acc, 0), svget4(mr, 0), svget4(dm, 0)),
                      svmls_x(all32, svget4(acc, 1), svget4(mr, 1), svget4(dm, 1)),
                      svmls_x(all32, svget4(acc, 2), svget4(mr, 2), svget4(dm, 2)),
                      svmls_x(all32, svget4(acc, 3), svget4(mr, 3), svget4(dm, 3)));
    }
  }
  svst1_f32_x4(cols, dst, clamp_x4(acc, svdup_f32(lo), svdup_f32(hi)));
}
};

}  // namespace qmm::sme2
