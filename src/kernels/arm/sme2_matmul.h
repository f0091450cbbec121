// The SME2 GEMM and GEMV loops shared by the Q4_0 and Q8_0 SME2 kernels (ACLE, clang >= 19).
// Included only by the SME2 kernel sources (compiled with -march=armv8.2-a+sme2). Every
// function here runs in streaming mode and is inlined into the kernel's one
// __arm_locally_streaming entry point, so a kernel makes no call in streaming mode.
//
// Tiles. VL = SVL/32 (svcntw(): 32-bit lanes of a streaming vector; 16 at SVL 512).
//  - GEMM: output tile VL × 4·VL, done in two half passes of 2·VL columns: ZA0.S, ZA1.S hold the
//    int32 sums of one 32-block (scale group), ZA2.S, ZA3.S the F32 sums of the same rows and
//    columns over all of k (see "GEMM with the F32 sums in ZA" below).
//  - GEMV: output 1 × 4·VL; the four ZA array vectors of vector group ZA.S[0, VGx4] (in ZA0.S)
//    hold the int32 sums of one 32-block, one vector per VL columns, and group ZA.S[1, VGx4]
//    (ZA1.S) the F32 sums over all of k.
// Both read the packed RHS one 4-K "quad" at a time: nr = 4·VL rows × kr = 4 values, which the
// weight policy turns into four int8 vectors (quad; half: the two of one half pass); vector t
// holds rows t·VL.. t·VL+VL-1, row r's four K values in bytes 4r..4r+3 (exactly the operand
// layout SMOPA and SDOT want).
#pragma once
#include <arm_sme.h>

#include <cstddef>
#include <cstdint>

#include "core/blocks.h"
#include "kernels/arm/sme2_clamp.h"

namespace qmm::sme2 {

// Q4_0 weights, RHS qsi4c32ps1s0scalef16 (docs/design.md §5): a quad is nr little-endian u16 of four
// unsigned nibbles = 2 streaming vectors; LUTI4 (ZT0 = -8..7, zero point 8 folded into the
// table) expands each vector into two int8 vectors, nibble i of the vector -> byte i.
struct Q4Weights {
  static constexpr size_t kQuadBytesPerRow = 2;  // bytes of one row's 4 values in a quad
  static constexpr size_t kBlockBytesPerRow = kBlock / 2;
  static size_t panel_bytes(size_t nr, size_t k) __arm_streaming_compatible { return nr * (k / kBlock) * (kBlockBytesPerRow + 2); }
  __attribute__((always_inline)) inline static void load_table() __arm_streaming __arm_preserves("za")
      __arm_inout("zt0") {
    static const int32_t lut[16] = {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7};
    svldr_zt(0, lut);
  }
  // The GEMV's quads 2p and 2p + 1 of the block at `b` (16 vectors a block): one LD1B {4 vectors}
  // (its offset the load's immediate), four LUTI4 into two quads of four int8 vectors.
  __attribute__((always_inline)) inline static void quad_pair(const uint8_t* b, size_t p, svint8x4_t& q0,
                                                              svint8x4_t& q1) __arm_streaming
      __arm_preserves("za") __arm_in("zt0") {
    const svuint8x4_t idx = svld1_vnum_u8_x4(svptrue_c8(), b, static_cast<int64_t>(4 * p));
    const svint8x2_t l0 = svluti4_lane_zt_s8_x2(0, svget4(idx, 0), 0), l1 = svluti4_lane_zt_s8_x2(0, svget4(idx, 1), 0);
    const svint8x2_t l2 = svluti4_lane_zt_s8_x2(0, svget4(idx, 2), 0), l3 = svluti4_lane_zt_s8_x2(0, svget4(idx, 3), 0);
    q0 = svcreate4(svget2(l0, 0), svget2(l0, 1), svget2(l1, 0), svget2(l1, 1));
    q1 = svcreate4(svget2(l2, 0), svget2(l2, 1), svget2(l3, 0), svget2(l3, 1));
  }
  // Half h of the quad (columns h·2VL..h·2VL + 2VL, tiles 2h and 2h + 1): the vector at
  // `q` = quad + h·kHalfQuadBytes, one LUTI4.
  static constexpr size_t kHalfQuadVectors = 1;
  __attribute__((always_inline)) inline static svint8x2_t half(const uint8_t* q) __arm_streaming
      __arm_preserves("za") __arm_in("zt0") {
    return svluti4_lane_zt_s8_x2(0, svld1_u8(svptrue_b8(), q), 0);
  }
};

// Q8_0 weights, RHS qsi8c32pscalef16 with kr = 4: a quad is nr·4 int8 = 4 vectors as they are.
struct Q8Weights {
  static constexpr size_t kQuadBytesPerRow = 4;
  static constexpr size_t kBlockBytesPerRow = kBlock;
  static size_t panel_bytes(size_t nr, size_t k) __arm_streaming_compatible { return nr * (k / kBlock) * (kBlockBytesPerRow + 2); }
  __attribute__((always_inline)) inline static void load_table() __arm_streaming __arm_preserves("za")
      __arm_inout("zt0") {}
  // Quads 2p and 2p + 1 of the block at `b` (32 vectors a block): two LD1B {4 vectors}.
  __attribute__((always_inline)) inline static void quad_pair(const uint8_t* b, size_t p, svint8x4_t& q0,
                                                              svint8x4_t& q1) __arm_streaming
      __arm_preserves("za") __arm_in("zt0") {
    const auto* s = reinterpret_cast<const int8_t*>(b);
    q0 = svld1_vnum_s8_x4(svptrue_c8(), s, static_cast<int64_t>(8 * p));
    q1 = svld1_vnum_s8_x4(svptrue_c8(), s, static_cast<int64_t>(8 * p + 4));
  }
  static constexpr size_t kHalfQuadVectors = 2;
  __attribute__((always_inline)) inline static svint8x2_t half(const uint8_t* q) __arm_streaming
      __arm_preserves("za") __arm_in("zt0") {
    return svld1_s8_x2(svptrue_c8(), reinterpret_cast<const int8_t*>(q));
  }
};

// F16 values in the low halves of the 32-bit lanes -> F32 (FCVT of each container's low half).
__attribute__((always_inline)) inline svfloat32_t f16_lanes_f32(svuint32_t v) __arm_streaming {
  return svcvt_f32_f16_x(svptrue_b32(), svreinterpret_f16(v));
}

// n f16 scales (n <= VL) -> F32 lanes.
__attribute__((always_inline)) inline svfloat32_t load_scales(const uint8_t* p) __arm_streaming {
  return f16_lanes_f32(svld1uh_u32(svptrue_b32(), reinterpret_cast<const uint16_t*>(p)));
}

// 4·VL f16 scales (one per column of a 4·VL tile) -> four F32 vectors: one LD1H {2 vectors},
// one UUNPK {4 vectors} (each f16 zero-extended into a 32-bit lane, in order), four FCVT.
__attribute__((always_inline)) inline svfloat32x4_t load_scales_x4(const uint8_t* p) __arm_streaming {
  const svuint32x4_t u = svunpk_u32_u16_x4(svld1_u16_x2(svptrue_c16(), reinterpret_cast<const uint16_t*>(p)));
  return svcreate4(f16_lanes_f32(svget4(u, 0)), f16_lanes_f32(svget4(u, 1)), f16_lanes_f32(svget4(u, 2)),
                   f16_lanes_f32(svget4(u, 3)));
}

// The f16 LHS scale at p, in every F32 lane.
__attribute__((always_inline)) inline svfloat32_t lhs_scale_dup(const uint8_t* p) __arm_streaming {
  uint16_t bits;
  __builtin_memcpy(&bits, p, 2);
  return svcvt_f32_f16_x(svptrue_b32(), svreinterpret_f16(svdup_u32(bits)));
}

__attribute__((always_inline)) inline svfloat32x4_t to_f32(svint32x4_t v) __arm_streaming { return svcvt_f32_s32_x4(v); }

// Vector i (0..3) of a tuple, i known once the caller's loop is unrolled (svget4 wants a constant).
__attribute__((always_inline)) inline svint8_t part(svint8x4_t v, size_t i) __arm_streaming {
  switch (i) {
    case 0: return svget4(v, 0);
    case 1: return svget4(v, 1);
    case 2: return svget4(v, 2);
    default: return svget4(v, 3);
  }
}

__attribute__((always_inline)) inline float* row_ptr(float* dst, size_t stride, size_t i) __arm_streaming_compatible {
  return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride);
}

// ---- GEMM: one VL × 4·VL tile, dst[rows, cols] = clamp(Σ_b s_lhs·s_rhs·Σ_block a·w) ----------
//
// LHS panel (qsi8d32p, mr = VL, kr = 4): quad c of the panel = VL rows × 4 int8 = one vector at
// byte c·4·VL; f16 scales at VL·k + (b·VL + r)·2. RHS panel: quad c at c·nr·kQuadBytesPerRow,
// f16 scales at nr·k·kBlockBytesPerRow/32 + (b·nr + r)·2.

// k == 0: the empty sum, clamped.
__attribute__((always_inline)) inline void gemm_empty(size_t rows, svcount_t cols, float* dst, size_t stride,
                                                      svfloat32_t lo, svfloat32_t hi) __arm_streaming {
  const svfloat32_t z = svclamp(svdup_f32(0.0f), lo, hi);
  for (size_t i = 0; i < rows; ++i) svst1_f32_x4(cols, row_ptr(dst, stride, i), svcreate4(z, z, z, z));
}

// ---- GEMM with the F32 sums in ZA (half tiles) ------------------------------------------------
//
// The epilogue above costs ~18 instructions per output row and block (the row travels through
// dst). Here a tile is done in two passes over the columns, h = 0, 1: columns h·2VL..h·2VL+2VL.
// ZA0.S, ZA1.S take the int32 sums of one block (two SMOPA per quad), ZA2.S, ZA3.S hold the F32
// sums of the same rows and columns over all of k. After each block, ZA vector group w
// (ZA.S[w, VGx4]: array vectors w + j·VL, j = 0..3, i.e. rows r + j·VL/4 of tile w % 4 with
// r = w / 4) is read (one MOVA), converted (one SCVTF) and added (one multi-vector FMLA) into
// group w + 2 (the same rows of tile w % 4 + 2) times four vectors rsc_t · s_lhs[row]: one FMUL
// by element per output vector. dst is written once, clamped, after the last block.

// lsT[4s + j] = ls[s + j·VL/4]: the LHS scales regrouped so that 128-bit segment r holds the
// scales of the rows of vector groups 4r + t (TBL index, computed once per tile).
__attribute__((always_inline)) inline svuint32_t group_rows_index() __arm_streaming {
  const svbool_t all = svptrue_b32();
  const svuint32_t e = svindex_u32(0, 1);
  return svmla_n_u32_x(all, svlsr_n_u32_x(all, e, 2), svand_n_u32_x(all, e, 3), static_cast<uint32_t>(svcntw() / 4));
}

// Vector groups w + 2, w + 3 += groups w, w + 1 · (rsc_t per column) · (s_lhs per row), w = 4r; the
// four rows' scales at l4 (lsT + w).
__attribute__((always_inline)) inline void za_scale_rows(uint32_t w, svfloat32_t rsc0, svfloat32_t rsc1,
                                                         const float* l4) __arm_streaming __arm_inout("za") {
  const svfloat32_t l = svld1rq_f32(svptrue_b32(), l4);
  const svfloat32x4_t s0 = svcvt_f32_s32_x4(svread_za32_s32_vg1x4(w));
  svmla_za32_f32_vg1x4(w + 2, s0,
                       svcreate4(svmul_lane(rsc0, l, 0), svmul_lane(rsc0, l, 1), svmul_lane(rsc0, l, 2),
                                 svmul_lane(rsc0, l, 3)));
  const svfloat32x4_t s1 = svcvt_f32_s32_x4(svread_za32_s32_vg1x4(w + 1));
  svmla_za32_f32_vg1x4(w + 3, s1,
                       svcreate4(svmul_lane(rsc1, l, 0), svmul_lane(rsc1, l, 1), svmul_lane(rsc1, l, 2),
                                 svmul_lane(rsc1, l, 3)));
}

// ZA2.S, ZA3.S += ZA0.S, ZA1.S · (rsc_t per column) · (s_lhs per row), s_lhs regrouped in lsT:
// VL/4 values of r, two at a time where VL/4 is even (VL >= 8).
__attribute__((always_inline)) inline void za_scale_block(svfloat32_t rsc0, svfloat32_t rsc1, const float* lsT)
    __arm_streaming __arm_inout("za") {
  const uint32_t groups = static_cast<uint32_t>(svcntw());
  uint32_t w = 0;
  if (groups % 8 != 0) {
    za_scale_rows(0, rsc0, rsc1, lsT);
    w = 4;
    lsT += 4;
  }
  for (; w < groups; w += 8, lsT += 8) {
    za_scale_rows(w, rsc0, rsc1, lsT);
    za_scale_rows(w + 4, rsc0, rsc1, lsT + 4);
  }
}

// Rows 0..rows-1 of ZA2.S, ZA3.S (row i: array vectors 4i + 2, 4i + 3), clamped, into dst.
__attribute__((always_inline)) inline void za_store_half(size_t rows, svcount_t cols, float* dst, size_t stride,
                                                         svfloat32_t lo, svfloat32_t hi) __arm_streaming __arm_in("za") {
  for (size_t i = 0; i < rows; ++i) {
    const svint8x2_t z = svread_hor_za8_s8_vg2(0, static_cast<uint32_t>(4 * i + 2));
    const svfloat32x2_t v = svcreate2(svreinterpret_f32(svget2(z, 0)), svreinterpret_f32(svget2(z, 1)));
    svst1_f32_x2(cols, row_ptr(dst, stride, i), svmin_single_f32_x2(svmax_single_f32_x2(v, lo), hi));
  }
}

// The tile loops of 32-block weights (Q4_0, Q8_0): one scale per block and column.
struct BlockTiles {
  template <class W>
  __attribute__((always_inline)) inline static void
  gemm_tile(size_t rows, svcount_t cols, size_t ncols, size_t k, const uint8_t* lhs, const uint8_t* rhs,
      float* dst, size_t stride, float lo, float hi) __arm_streaming __arm_inout("za")
      __arm_in("zt0") {
    const size_t vl = svcntw(), nr = 4 * vl, blocks = k / kBlock;
    const svcount_t all8c = svptrue_c8();
    const svbool_t all32 = svptrue_b32();
    const uint8_t* lhs_scales = lhs + vl * k;
    const uint8_t* rhs_scales = rhs + nr * blocks * W::kBlockBytesPerRow;
    const svfloat32_t vlo = svdup_f32(lo), vhi = svdup_f32(hi);
    if (blocks == 0) return gemm_empty(rows, cols, dst, stride, vlo, vhi);
    const size_t quad_bytes = nr * W::kQuadBytesPerRow, half_bytes = quad_bytes / 2;
    const svuint32_t regroup = group_rows_index();
    float lsT[64];  // the block's LHS scales, regrouped (VL <= 64 at SVL 2048)
    // The offsets of LHS quads 4..7 and weight quads 4..7 in registers: clang 19 folds no
    // immediate into multi-vector loads nor one beyond 7 vectors into single ones, and would
    // recompute them (RDVL) per block; the empty asm keeps it from rematerialising them.
    size_t a4 = 16 * vl, w4 = 4 * quad_bytes;
    asm("" : "+r"(a4), "+r"(w4));
    for (size_t h = 0; h < 2 && h * 2 * vl < ncols; ++h) {
      svzero_mask_za(0xcc);  // ZA2.S, ZA3.S: the F32 sums
      const uint8_t* w = rhs + h * half_bytes;
      const uint8_t* rs = rhs_scales + h * 2 * vl * 2;
      const auto* a = reinterpret_cast<const int8_t*>(lhs);
      const auto* a_end = a + blocks * kBlock * vl;
      const uint8_t* ls = lhs_scales;
      for (; a != a_end; a += kBlock * vl, ls += vl * 2, w += 8 * quad_bytes, rs += nr * 2) {
        svzero_mask_za(0x33);  // ZA0.S, ZA1.S: the block's int32 sums
        const svint8x4_t a03 = svld1_s8_x4(all8c, a), a47 = svld1_s8_x4(all8c, a + a4);
        const uint8_t* w47 = w + w4;
#pragma clang loop unroll(full)
        for (size_t q = 0; q < 8; ++q) {
          const svint8_t av = part(q < 4 ? a03 : a47, q % 4);
          const svint8x2_t wv = W::half((q < 4 ? w : w47) + q % 4 * quad_bytes);
          const svbool_t all8 = svptrue_b8();
          svmopa_za32_s8_m(0, all8, all8, av, svget2(wv, 0));
          svmopa_za32_s8_m(1, all8, all8, av, svget2(wv, 1));
        }
        svst1_f32(all32, lsT, svtbl(load_scales(ls), regroup));
        za_scale_block(load_scales(rs), load_scales(rs + vl * 2), lsT);
      }
      const svcount_t hc = svwhilelt_c32(static_cast<uint64_t>(h * 2 * vl), static_cast<uint64_t>(ncols), 2);
      za_store_half(rows, hc, dst + h * 2 * vl, stride, vlo, vhi);
    }
  }

  // ---- GEMV: one LHS row (mr = 1: the k int8 in order, then k/32 f16 scales) -------------------
  //
  // Per 16 LHS bytes (4 quads) one LD1RQB replicates them into every 128-bit segment; SDOT
  // ZA.S[0, VGx4] (ZA0.S) with lane index j then multiplies quad j with the four weight vectors,
  // the block's int32 sums. The weights come two quads at a time (W::quad_pair: one LD1B
  // {4 vectors} a pair for Q4_0, its offset the load's immediate). The F32 sums stay in ZA vector
  // group 1 (ZA1.S) over all of k: per block one MOVA, one SCVTF, the four vectors rsc_t · s_lhs
  // (exact: an F16 × F16 product fits F32) and one multi-vector FMLA, acc + sums · (rsc · s_lhs)
  // fused, as KleidiAI's kernel of the same name computes it (the same bits); dst is written once.
  //
  // Quads 2p and 2p + 1 of the block at rhs into the block's int32 sums: SDOT lanes 2(p % 2) and
  // 2(p % 2) + 1 of a (the block's LHS quads 0..3 for p < 2, 4..7 for p >= 2).
  template <class W, int kP>
  __attribute__((always_inline)) inline static void sdot_quad_pair(const uint8_t* rhs, svint8_t a) __arm_streaming
      __arm_inout("za") __arm_in("zt0") {
    svint8x4_t q0, q1;
    W::quad_pair(rhs, kP, q0, q1);
    svdot_lane_za32_s8_vg1x4(0, q0, a, 2 * (kP % 2));
    svdot_lane_za32_s8_vg1x4(0, q1, a, 2 * (kP % 2) + 1);
  }
  template <class W>
  __attribute__((always_inline)) inline static void
  gemv_row(svcount_t cols, size_t k, const uint8_t* lhs, const uint8_t* rhs, float* dst, float lo,
      float hi) __arm_streaming __arm_inout("za") __arm_in("zt0") {
    const size_t nr = 4 * svcntw(), blocks = k / kBlock, block_bytes = 8 * nr * W::kQuadBytesPerRow;
    const svbool_t all8 = svptrue_b8(), all32 = svptrue_b32();
    const uint8_t* ls = lhs + k;                                           // the LHS f16 scales
    const uint8_t* rs = rhs + nr * blocks * W::kBlockBytesPerRow;          // the RHS f16 scales
    const auto* a = reinterpret_cast<const int8_t*>(lhs);
    svzero_mask_za(0x22);  // ZA1.S: the F32 sums
    for (const int8_t* a_end = a + blocks * kBlock; a != a_end; a += kBlock, ls += 2, rs += nr * 2, rhs += block_bytes) {
      svzero_mask_za(0x11);  // ZA0.S: the block's int32 sums
      const svint8_t a0 = svld1rq_s8(all8, a), a1 = svld1rq_s8(all8, a + 16);
      sdot_quad_pair<W, 0>(rhs, a0);
      sdot_quad_pair<W, 1>(rhs, a0);
      sdot_quad_pair<W, 2>(rhs, a1);
      sdot_quad_pair<W, 3>(rhs, a1);
      const svfloat32x4_t sums = svcvt_f32_s32_x4(svread_za32_s32_vg1x4(0));
      const svfloat32_t l = lhs_scale_dup(ls);
      const svfloat32x4_t r = load_scales_x4(rs);
      svmla_za32_f32_vg1x4(1, sums,
                           svcreate4(svmul_x(all32, svget4(r, 0), l), svmul_x(all32, svget4(r, 1), l),
                                     svmul_x(all32, svget4(r, 2), l), svmul_x(all32, svget4(r, 3), l)));
    }
    svst1_f32_x4(cols, dst, clamp_x4(svread_za32_f32_vg1x4(1), svdup_f32(lo), svdup_f32(hi)));
  }
};

// Tiles: where the tile loops are: BlockTiles (above) for 32-blocks with one scale each,
// KTiles (sme2_kquants.h) for super-blocks with scale groups.
template <class W, class Tiles = BlockTiles>
__attribute__((always_inline)) inline void
gemm(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
    size_t stride, float lo, float hi) __arm_streaming __arm_inout("za") __arm_inout("zt0") {
  W::load_table();
  const size_t vl = svcntw(), nr = 4 * vl;
  const size_t lhs_panel = vl * (k / kBlock) * (kBlock + 2);
  const size_t rhs_panel = W::panel_bytes(nr, k);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += nr, rhs += rhs_panel) {
    const svcount_t cols = svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(n), 4);
    const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
    for (size_t m0 = 0; m0 < m; m0 += vl, lhs += lhs_panel) {
      const size_t rows = m - m0 < vl ? m - m0 : vl;
      float* out = row_ptr(dst, stride, m0) + n0;
      Tiles::template gemm_tile<W>(rows, cols, n - n0 < nr ? n - n0 : nr, k, lhs, rhs, out, stride, lo, hi);
    }
  }
}

template <class W, class Tiles = BlockTiles>
__attribute__((always_inline)) inline void
gemv(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
    size_t stride, float lo, float hi) __arm_streaming __arm_inout("za") __arm_inout("zt0") {
  W::load_table();
  const size_t nr = 4 * svcntw();
  const size_t lhs_row = (k / kBlock) * (kBlock + 2);
  const size_t rhs_panel = W::panel_bytes(nr, k);
  for (size_t i = 0; i < m; ++i) {
    const auto* lhs = static_cast<const uint8_t*>(lhs_packed) + i * lhs_row;
    const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
    for (size_t n0 = 0; n0 < n; n0 += nr, rhs += rhs_panel) {
      const svcount_t cols = svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(n), 4);
      float* out = row_ptr(dst, stride, i) + n0;
      Tiles::template gemv_row<W>(cols, k, lhs, rhs, out, lo, hi);
    }
  }
}

}  // namespace qmm::sme2
