// The SME2 GEMM and GEMV loops shared by the Q4_0 and Q8_0 SME2 kernels (ACLE, clang >= 19).
// Included only by the SME2 kernel sources (compiled with -march=armv8.2-a+sme2). Every
// function here runs in streaming mode and is inlined into the kernel's one
// __arm_locally_streaming entry point, so a kernel makes no call in streaming mode.
//
// Tiles. VL = SVL/32 (svcntw(): 32-bit lanes of a streaming vector; 16 at SVL 512).
//  - GEMM: output tile VL × 4·VL. The four 32-bit ZA tiles ZA0.S..ZA3.S hold the int32 sums of
//    one 32-block for output columns [t·VL, t·VL + VL) (tile t), one row per ZA slice.
//  - GEMV: output 1 × 4·VL; the four ZA array vectors of vector group ZA.S[0, VGx4] hold the
//    int32 sums of one 32-block, one vector per VL columns.
// Both read the packed RHS one 4-K "quad" at a time: nr = 4·VL rows × kr = 4 values, which the
// weight policy turns into four int8 vectors; vector t holds rows t·VL.. t·VL+VL-1, row r's
// four K values in bytes 4r..4r+3 (exactly the operand layout SMOPA and SDOT want).
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
  // The four int8 vectors of the quad at `q` (nr·2 bytes).
  __attribute__((always_inline)) inline static svint8x4_t quad(const uint8_t* q) __arm_streaming
      __arm_preserves("za") __arm_in("zt0") {
    const svuint8x2_t idx = svld1_u8_x2(svptrue_c8(), q);
    const svint8x2_t lo = svluti4_lane_zt_s8_x2(0, svget2(idx, 0), 0);
    const svint8x2_t hi = svluti4_lane_zt_s8_x2(0, svget2(idx, 1), 0);
    return svcreate4(svget2(lo, 0), svget2(lo, 1), svget2(hi, 0), svget2(hi, 1));
  }
};

// Q8_0 weights, RHS qsi8c32pscalef16 with kr = 4: a quad is nr·4 int8 = 4 vectors as they are.
struct Q8Weights {
  static constexpr size_t kQuadBytesPerRow = 4;
  static constexpr size_t kBlockBytesPerRow = kBlock;
  static size_t panel_bytes(size_t nr, size_t k) __arm_streaming_compatible { return nr * (k / kBlock) * (kBlockBytesPerRow + 2); }
  __attribute__((always_inline)) inline static void load_table() __arm_streaming __arm_preserves("za")
      __arm_inout("zt0") {}
  __attribute__((always_inline)) inline static svint8x4_t quad(const uint8_t* q) __arm_streaming
      __arm_preserves("za") __arm_in("zt0") {
    return svld1_s8_x4(svptrue_c8(), reinterpret_cast<const int8_t*>(q));
  }
};

// n f16 scales (n <= VL) -> F32 lanes (FCVT of the low half of each 32-bit container).
__attribute__((always_inline)) inline svfloat32_t load_scales(const uint8_t* p) __arm_streaming {
  const svbool_t all = svptrue_b32();
  return svcvt_f32_f16_x(all, svreinterpret_f16(svld1uh_u32(all, reinterpret_cast<const uint16_t*>(p))));
}

// 4·VL f16 scales (one per column of a 4·VL tile) -> four F32 vectors.
__attribute__((always_inline)) inline svfloat32x4_t load_scales_x4(const uint8_t* p) __arm_streaming {
  const size_t vl = svcntw();
  return svcreate4(load_scales(p), load_scales(p + vl * 2), load_scales(p + vl * 4), load_scales(p + vl * 6));
}

// The f16 LHS scale at p, in every F32 lane.
__attribute__((always_inline)) inline svfloat32_t lhs_scale_dup(const uint8_t* p) __arm_streaming {
  uint16_t bits;
  __builtin_memcpy(&bits, p, 2);
  return svcvt_f32_f16_x(svptrue_b32(), svreinterpret_f16(svdup_u32(bits)));
}

__attribute__((always_inline)) inline svfloat32x4_t to_f32(svint32x4_t v) __arm_streaming { return svcvt_f32_s32_x4(v); }

// acc_t + sums_t · (rsc_t · ls), t = 0..3.
__attribute__((always_inline)) inline svfloat32x4_t scale_acc(svfloat32x4_t acc, svfloat32x4_t sums, svfloat32x4_t rsc,
                                                              svfloat32_t ls) __arm_streaming {
  const svbool_t all = svptrue_b32();
  return svcreate4(svmla_x(all, svget4(acc, 0), svget4(sums, 0), svmul_x(all, svget4(rsc, 0), ls)),
                   svmla_x(all, svget4(acc, 1), svget4(sums, 1), svmul_x(all, svget4(rsc, 1), ls)),
                   svmla_x(all, svget4(acc, 2), svget4(sums, 2), svmul_x(all, svget4(rsc, 2), ls)),
                   svmla_x(all, svget4(acc, 3), svget4(sums, 3), svmul_x(all, svget4(rsc, 3), ls)));
}

__attribute__((always_inline)) inline float* row_ptr(float* dst, size_t stride, size_t i) __arm_streaming_compatible {
  return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride);
}

// ---- GEMM: one VL × 4·VL tile, dst[rows, cols] = clamp(Σ_b s_lhs·s_rhs·Σ_block a·w) ----------
//
// LHS panel (qsi8d32p, mr = VL, kr = 4): quad c of the panel = VL rows × 4 int8 = one vector at
// byte c·4·VL; f16 scales at VL·k + (b·VL + r)·2. RHS panel: quad c at c·nr·kQuadBytesPerRow,
// f16 scales at nr·k·kBlockBytesPerRow/32 + (b·nr + r)·2.
// One output row i of the GEMM epilogue: row i of ZA0.S..ZA3.S is ZA array rows 4i..4i+3 =
// ZA0.B slices 4i..4i+3 (one MOVA ×4); SCVTF ×4; × the RHS scales (per column, rsc) and × the
// LHS scale of row i (lane J of every 128-bit segment of ls4, FMUL/FMLA by element); stored
// into dst (first block) or added to it; FMAX + FMIN ×4 (clamp_x4) after the last block.
template <int J>
__attribute__((always_inline)) inline void gemm_row(size_t i, svcount_t cols, float* out, svfloat32x4_t rsc,
                                                    svfloat32_t ls4, bool first, bool last, svfloat32_t lo,
                                                    svfloat32_t hi) __arm_streaming __arm_in("za") {
  const svbool_t all = svptrue_b32();
  const svint8x4_t za = svread_hor_za8_s8_vg4(0, static_cast<uint32_t>(4 * i));
  const svfloat32x4_t s = to_f32(svcreate4(svreinterpret_s32(svget4(za, 0)), svreinterpret_s32(svget4(za, 1)),
                                           svreinterpret_s32(svget4(za, 2)), svreinterpret_s32(svget4(za, 3))));
  const svfloat32_t g0 = svmul_x(all, svget4(s, 0), svget4(rsc, 0)), g1 = svmul_x(all, svget4(s, 1), svget4(rsc, 1)),
                    g2 = svmul_x(all, svget4(s, 2), svget4(rsc, 2)), g3 = svmul_x(all, svget4(s, 3), svget4(rsc, 3));
  svfloat32x4_t acc;
  if (first) {
    acc = svcreate4(svmul_lane(g0, ls4, J), svmul_lane(g1, ls4, J), svmul_lane(g2, ls4, J), svmul_lane(g3, ls4, J));
  } else {
    const svfloat32x4_t old = svld1_f32_x4(cols, out);
    acc = svcreate4(svmla_lane(svget4(old, 0), g0, ls4, J), svmla_lane(svget4(old, 1), g1, ls4, J),
                    svmla_lane(svget4(old, 2), g2, ls4, J), svmla_lane(svget4(old, 3), g3, ls4, J));
  }
  if (last) acc = clamp_x4(acc, lo, hi);
  svst1_f32_x4(cols, out, acc);
}

// Four SMOPA: ZAt.S += av ⊗ wv_t (VL rows × VL columns of 4-K dot products each), t = 0..3.
__attribute__((always_inline)) inline void mopa4(svint8_t av, svint8x4_t wv) __arm_streaming __arm_inout("za") {
  const svbool_t all = svptrue_b8();
  svmopa_za32_s8_m(0, all, all, av, svget4(wv, 0));
  svmopa_za32_s8_m(1, all, all, av, svget4(wv, 1));
  svmopa_za32_s8_m(2, all, all, av, svget4(wv, 2));
  svmopa_za32_s8_m(3, all, all, av, svget4(wv, 3));
}

// The epilogue of one block (or scale group) of a GEMM tile: every output row i gets
// ZA row i · rsc (per column) · the LHS scale of row i (f16 at lhs_scales + 2i), stored
// (first), added to dst, and clamped (last). Four rows per LD1RQW of the LHS scales (lane J of
// each 128-bit segment).
__attribute__((always_inline)) inline void gemm_epilogue(size_t rows, svcount_t cols, float* dst, size_t stride,
                                                         svfloat32x4_t rsc, const uint8_t* lhs_scales, bool first,
                                                         bool last, svfloat32_t lo,
                                                         svfloat32_t hi) __arm_streaming __arm_in("za") {
  float ls[64];  // the block's LHS scales as F32 (VL <= 64 at SVL 2048)
  svst1_f32(svptrue_b32(), ls, load_scales(lhs_scales));
  for (size_t i = 0; i < rows; i += 4) {
    const svfloat32_t ls4 = svld1rq_f32(svptrue_b32(), ls + i);
    float* out = row_ptr(dst, stride, i);
    gemm_row<0>(i, cols, out, rsc, ls4, first, last, lo, hi);
    if (i + 1 < rows) gemm_row<1>(i + 1, cols, row_ptr(out, stride, 1), rsc, ls4, first, last, lo, hi);
    if (i + 2 < rows) gemm_row<2>(i + 2, cols, row_ptr(out, stride, 2), rsc, ls4, first, last, lo, hi);
    if (i + 3 < rows) gemm_row<3>(i + 3, cols, row_ptr(out, stride, 3), rsc, ls4, first, last, lo, hi);
  }
}

// k == 0: the empty sum, clamped.
__attribute__((always_inline)) inline void gemm_empty(size_t rows, svcount_t cols, float* dst, size_t stride,
                                                      svfloat32_t lo, svfloat32_t hi) __arm_streaming {
  const svfloat32_t z = svclamp(svdup_f32(0.0f), lo, hi);
  for (size_t i = 0; i < rows; ++i) svst1_f32_x4(cols, row_ptr(dst, stride, i), svcreate4(z, z, z, z));
}

// The tile loops of 32-block weights (Q4_0, Q8_0): one scale per block and column.
struct BlockTiles {
  template <class W>
  __attribute__((always_inline)) inline static void
  gemm_tile(size_t rows, svcount_t cols, size_t k, const uint8_t* lhs, const uint8_t* rhs,
      float* dst, size_t stride, float lo, float hi) __arm_streaming __arm_inout("za")
      __arm_in("zt0") {
    const size_t vl = svcntw(), nr = 4 * vl, blocks = k / kBlock;
    const svbool_t all8 = svptrue_b8();
    const uint8_t* lhs_scales = lhs + vl * k;
    const uint8_t* rhs_scales = rhs + nr * blocks * W::kBlockBytesPerRow;
    const svfloat32_t vlo = svdup_f32(lo), vhi = svdup_f32(hi);
    for (size_t b = 0; b < blocks; ++b) {
      svzero_za();
      // Steady state: per quad one LHS vector, the weight quad (LUTI4 for Q4), four SMOPA.
      const uint8_t* a = lhs + b * kBlock * vl;
      const uint8_t* w = rhs + b * 8 * nr * W::kQuadBytesPerRow;
#pragma clang loop unroll(full)
      for (size_t q = 0; q < 8; ++q) {
        const svint8_t av = svld1_vnum_s8(all8, reinterpret_cast<const int8_t*>(a), static_cast<int64_t>(q));
        mopa4(av, W::quad(w + q * nr * W::kQuadBytesPerRow));
      }
      gemm_epilogue(rows, cols, dst, stride, load_scales_x4(rhs_scales + b * nr * 2), lhs_scales + b * vl * 2,
                    b == 0, b + 1 == blocks, vlo, vhi);
    }
    if (blocks == 0) gemm_empty(rows, cols, dst, stride, vlo, vhi);
  }

  // ---- GEMV: one LHS row (mr = 1: the k int8 in order, then k/32 f16 scales) -------------------
  //
  // Per 16 LHS bytes (4 quads) one LD1RQ replicates them into every 128-bit segment; SDOT
  // ZA.S[0, VGx4] with lane index j then multiplies quad j with the four weight vectors.
  template <class W>
  __attribute__((always_inline)) inline static void
  gemv_row(svcount_t cols, size_t k, const uint8_t* lhs, const uint8_t* rhs, float* dst, float lo,
      float hi) __arm_streaming __arm_inout("za") __arm_in("zt0") {
    const size_t vl = svcntw(), nr = 4 * vl, blocks = k / kBlock;
    const svbool_t all8 = svptrue_b8();
    const uint8_t* lhs_scales = lhs + k;
    const uint8_t* rhs_scales = rhs + nr * blocks * W::kBlockBytesPerRow;
    const svint32_t zero = svdup_s32(0);
    const svfloat32_t fzero = svdup_f32(0.0f);
    svfloat32x4_t acc = svcreate4(fzero, fzero, fzero, fzero);
    for (size_t b = 0; b < blocks; ++b) {
      svwrite_za32_s32_vg1x4(0, svcreate4(zero, zero, zero, zero));
      const uint8_t* w = rhs + b * 8 * nr * W::kQuadBytesPerRow;
#pragma clang loop unroll(full)
      for (size_t h = 0; h < 2; ++h) {
        const svint8_t a = svld1rq_s8(all8, reinterpret_cast<const int8_t*>(lhs + b * kBlock + h * 16));
        const uint8_t* wh = w + h * 4 * nr * W::kQuadBytesPerRow;
        svdot_lane_za32_s8_vg1x4(0, W::quad(wh), a, 0);
        svdot_lane_za32_s8_vg1x4(0, W::quad(wh + 1 * nr * W::kQuadBytesPerRow), a, 1);
        svdot_lane_za32_s8_vg1x4(0, W::quad(wh + 2 * nr * W::kQuadBytesPerRow), a, 2);
        svdot_lane_za32_s8_vg1x4(0, W::quad(wh + 3 * nr * W::kQuadBytesPerRow), a, 3);
      }
      const svfloat32x4_t sums = to_f32(svread_za32_s32_vg1x4(0));
      const svfloat32_t ls = lhs_scale_dup(lhs_scales + b * 2);
      acc = scale_acc(acc, sums, load_scales_x4(rhs_scales + b * nr * 2), ls);
    }
    svst1_f32_x4(cols, dst, clamp_x4(acc, svdup_f32(lo), svdup_f32(hi)));
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
      Tiles::template gemm_tile<W>(rows, cols, k, lhs, rhs, out, stride, lo, hi);
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
