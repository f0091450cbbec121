// The SME2 GEMM and GEMV loops of the per-channel kernels (qai8dxp LHS × qsi8cxp / qsi4cxp RHS,
// kernels/ref/layouts_c.h), shared by the QC8 and QC4 SME2 kernels (ACLE, clang >= 19). Included
// only by SME2 kernel sources; every function runs in streaming mode and is inlined into the
// kernel's one __arm_locally_streaming entry point, so a kernel makes no call in streaming mode.
//
// There is no per-block scale: the int32 sums stay in ZA over the whole of K, and the F32
// epilogue runs once per output, not once per 32-block as in the Q4_0 / Q8_0 kernels
// (kernels/arm/sme2_matmul.h):
//   isum = acc + (-zp_lhs)·rsum;  dst = clamp(float(isum)·(s_lhs·s_rhs) + bias)   (FMAX + FMIN)
//
// Tiles. VL = SVL/32 (svcntw()). GEMM: VL × 4·VL, ZA0.S..ZA3.S = output columns [t·VL, t·VL+VL);
// GEMV: 1 × 4·VL in the ZA array vectors of group ZA.S[0, VGx4]. Both read the RHS 4·VL rows ×
// 4 bytes at a time ("chunk" = 4 streaming vectors, vector t = rows t·VL..t·VL+VL-1):
//  - QC8 (qsi8cxp, kr = 4): a chunk is 4 K columns, the SMOPA / SDOT operands as they are.
//  - QC4 (qsi4cxp, kr = 8, sr = 2): chunk t of 32-block b holds columns 32b+4t..+3 in the low
//    nibbles and 32b+16+4t..+3 in the high ones; SRSHL ×4 (one multi-vector instruction) gives
//    16·q of the low nibbles, AND 0xF0 of the high ones (the packer's sums ×16 and scales /16
//    undo the 16). They multiply LHS chunks 8b+t and 8b+4+t.
//  - QC4 on KleidiAI's SME2 layout (qsi4cxps1s0, kr = 4, sr = 1): a chunk is 4 K columns as 4·VL
//    u16 of 4 signed nibbles = 2 vectors; LUTI4 with the signed int4 values in ZT0 expands each
//    into two operand vectors (nibble i -> byte i). The kernel loads ZT0 (Qc4Kai::load_table)
//    before calling gemm / gemv; every kernel of this file is __arm_new("za", "zt0").
#pragma once
#include <arm_sme.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arm/sme2_clamp.h"

namespace qmm::sme2ch {
namespace {  // internal linkage: every kernel file is compiled with its own flags

__attribute__((always_inline)) inline size_t kpad(size_t k) __arm_streaming_compatible { return (k + 31) / 32 * 32; }

// Output of 4·VL columns of one row from its int32 sums `acc`: the RHS panel's tail (4·VL int32
// sums, F32 scales, F32 biases: 4 vectors each, at `tail`), the LHS row's negated zero point and
// scale.
template <int T>
__attribute__((always_inline)) inline svint32_t isum(svint32x4_t acc, svint32x4_t sums, int32_t neg_zp) __arm_streaming {
  return svmla_n_s32_x(svptrue_b32(), svget4(acc, T), svget4(sums, T), neg_zp);
}
// The bias as KleidiAI adds it: its SME GEMMs round the product, then add (FMUL, FADD); its SME
// GEMVs (..._sme_dot, ..._sme2_dot, ..._sme2_sdot) fuse them (one FMLA). kFused picks which, so
// that every kernel gives the bits of KleidiAI's kernel on the same layout.
template <int T, bool kFused>
__attribute__((always_inline)) inline svfloat32_t out_vector(svfloat32x4_t f, svfloat32x4_t scales, svfloat32x4_t biases,
                                                             float s_lhs) __arm_streaming {
  const svbool_t all = svptrue_b32();
  const svfloat32_t c = svmul_n_f32_x(all, svget4(scales, T), s_lhs);
  if constexpr (kFused) return svmla_f32_x(all, svget4(biases, T), svget4(f, T), c);
  return svadd_f32_x(all, svmul_f32_x(all, svget4(f, T), c), svget4(biases, T));
}

// isum = acc + (-zp)·rsum (4 MLA), one multi-vector SCVTF, ·(s_rhs·s_lhs) + bias (GEMM: 8 FMUL +
// 4 FADD; GEMV: 4 FMUL + 4 FMLA), FMAX + FMIN, one store.
template <bool kFused>
__attribute__((always_inline)) inline void store_row(svint32x4_t acc, const uint8_t* tail, size_t nr, int32_t neg_zp,
                                                     float s_lhs, svcount_t cols, float* out, svfloat32_t lo,
                                                     svfloat32_t hi) __arm_streaming {
  const svcount_t all = svptrue_c32();
  const svint32x4_t sums = svld1_s32_x4(all, reinterpret_cast<const int32_t*>(tail));
  const svfloat32x4_t scales = svld1_f32_x4(all, reinterpret_cast<const float*>(tail + nr * 4));
  const svfloat32x4_t biases = svld1_f32_x4(all, reinterpret_cast<const float*>(tail + nr * 8));
  const svfloat32x4_t f = svcvt_f32_s32_x4(
      svcreate4(isum<0>(acc, sums, neg_zp), isum<1>(acc, sums, neg_zp), isum<2>(acc, sums, neg_zp), isum<3>(acc, sums, neg_zp)));
  const svfloat32x4_t v =
      svcreate4(out_vector<0, kFused>(f, scales, biases, s_lhs), out_vector<1, kFused>(f, scales, biases, s_lhs),
                out_vector<2, kFused>(f, scales, biases, s_lhs), out_vector<3, kFused>(f, scales, biases, s_lhs));
  svst1_f32_x4(cols, out, sme2::clamp_x4(v, lo, hi));
}

__attribute__((always_inline)) inline float* row_ptr(float* dst, size_t stride, size_t i) __arm_streaming_compatible {
  return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride);
}

__attribute__((always_inline)) inline void mopa4(svint8_t a, svint8x4_t w) __arm_streaming __arm_inout("za") {
  const svbool_t all = svptrue_b8();
  svmopa_za32_s8_m(0, all, all, a, svget4(w, 0));
  svmopa_za32_s8_m(1, all, all, a, svget4(w, 1));
  svmopa_za32_s8_m(2, all, all, a, svget4(w, 2));
  svmopa_za32_s8_m(3, all, all, a, svget4(w, 3));
}

// A QC4 chunk's two SMOPA / SDOT operand quadruples: 16·(low nibbles), 16·(high nibbles).
__attribute__((always_inline)) inline svint8x4_t load_chunk(const uint8_t* chunk) __arm_streaming {
  return svld1_s8_x4(svptrue_c8(), reinterpret_cast<const int8_t*>(chunk));
}
__attribute__((always_inline)) inline svint8x4_t low_nibbles(svint8x4_t w) __arm_streaming {
  return svrshl_single_s8_x4(w, svdup_s8(4));
}
// AND with the mask in a register (the three-operand AND Zd.D, Zn.D, Zm.D): the immediate form
// is destructive and would cost a MOV per vector to keep w for the SRSHL. The empty asm hides
// the constant from the compiler, which would otherwise fold it into the immediate form.
__attribute__((always_inline)) inline svint8x4_t high_nibbles(svint8x4_t w, svint8_t mask) __arm_streaming {
  const svbool_t all = svptrue_b8();
  return svcreate4(svand_s8_x(all, svget4(w, 0), mask), svand_s8_x(all, svget4(w, 1), mask),
                   svand_s8_x(all, svget4(w, 2), mask), svand_s8_x(all, svget4(w, 3), mask));
}
__attribute__((always_inline)) inline svint8_t high_mask() __arm_streaming {
  svint8_t mask = svdup_s8(static_cast<int8_t>(0xF0));
  asm("" : "+w"(mask));
  return mask;
}

// ---- the weight formats ----------------------------------------------------------------------

using sme2::chunk_offsets;  // sme2_clamp.h: the K step's chunk offsets, kept in registers
using sme2::ChunkOffsets;

struct Qc8 {
  __attribute__((always_inline)) static size_t data_bytes(size_t nr, size_t k) __arm_streaming_compatible { return nr * kpad(k); }
  // GEMM: ZA0..3 += the VL × 4·VL product over all K. Per 16 K: LD1B×4 LHS, 4 × (LD1B×4, 4 SMOPA),
  // two pointer steps (ADDVL); the chunk offsets stay in registers (chunk_offsets).
  __attribute__((always_inline)) inline static void gemm_acc(size_t k, const uint8_t* lhs, const uint8_t* rhs)
      __arm_streaming __arm_inout("za") {
    const size_t vl = svcntw(), nr = 4 * vl, kp = kpad(k);
    const svcount_t all = svptrue_c8();
    const ChunkOffsets o = chunk_offsets(nr * 4);
    const auto* a = reinterpret_cast<const int8_t*>(lhs);
    const auto* w = reinterpret_cast<const int8_t*>(rhs);
    for (size_t c = 0; c < kp; c += 16, a += 16 * vl, w += 16 * nr) {
      const svint8x4_t a4 = svld1_s8_x4(all, a);
      mopa4(svget4(a4, 0), svld1_s8_x4(all, w));
      mopa4(svget4(a4, 1), svld1_s8_x4(all, w + o.c[1]));
      mopa4(svget4(a4, 2), svld1_s8_x4(all, w + o.c[2]));
      mopa4(svget4(a4, 3), svld1_s8_x4(all, w + o.c[3]));
    }
  }
  // GEMV: ZA.S[0, VGx4] += one row × 4·VL. Per 16 K: LD1RQB, 4 × (LD1B×4, SDOT lane).
  __attribute__((always_inline)) inline static void gemv_acc(size_t k, const uint8_t* lhs, const uint8_t* rhs)
      __arm_streaming __arm_inout("za") {
    const size_t nr = 4 * svcntw(), kp = kpad(k);
    const svcount_t all = svptrue_c8();
    for (size_t c = 0; c < kp; c += 16) {
      const svint8_t a = svld1rq_s8(svptrue_b8(), reinterpret_cast<const int8_t*>(lhs + c));
      const auto* w = reinterpret_cast<const int8_t*>(rhs + c * nr);
      svdot_lane_za32_s8_vg1x4(0, svld1_s8_x4(all, w), a, 0);
      svdot_lane_za32_s8_vg1x4(0, svld1_s8_x4(all, w + nr * 4), a, 1);
      svdot_lane_za32_s8_vg1x4(0, svld1_s8_x4(all, w + nr * 8), a, 2);
      svdot_lane_za32_s8_vg1x4(0, svld1_s8_x4(all, w + nr * 12), a, 3);
    }
  }
};

struct Qc4 {
  __attribute__((always_inline)) static size_t data_bytes(size_t nr, size_t k) __arm_streaming_compatible {
    return nr * kpad(k) / 2;
  }
  template <int T>
  __attribute__((always_inline)) inline static void gemm_chunk(svint8x4_t a_lo, svint8x4_t a_hi, const uint8_t* w,
                                                              svint8_t mask) __arm_streaming __arm_inout("za") {
    const svint8x4_t v = load_chunk(w);
    mopa4(svget4(a_hi, T), high_nibbles(v, mask));
    mopa4(svget4(a_lo, T), low_nibbles(v));
  }
  // GEMM, per 32-block: LD1B×4 ×2 LHS, 4 × (LD1B×4, SRSHL×4, 4 AND, 8 SMOPA), two pointer steps.
  __attribute__((always_inline)) inline static void gemm_acc(size_t k, const uint8_t* lhs, const uint8_t* rhs)
      __arm_streaming __arm_inout("za") {
    const size_t vl = svcntw(), nr = 4 * vl, kp = kpad(k);
    const svcount_t all = svptrue_c8();
    const svint8_t mask = high_mask();
    const ChunkOffsets o = chunk_offsets(nr * 4);  // chunks of nr·4 bytes; o.c[1] = 16·VL: the high LHS quadruple
    const auto* a = reinterpret_cast<const int8_t*>(lhs);
    const uint8_t* w = rhs;
    for (size_t c = 0; c < kp; c += 32, a += 32 * vl, w += 16 * nr) {
      const svint8x4_t a_lo = svld1_s8_x4(all, a), a_hi = svld1_s8_x4(all, a + o.c[1]);
      gemm_chunk<0>(a_lo, a_hi, w, mask);
      gemm_chunk<1>(a_lo, a_hi, w + o.c[1], mask);
      gemm_chunk<2>(a_lo, a_hi, w + o.c[2], mask);
      gemm_chunk<3>(a_lo, a_hi, w + o.c[3], mask);
    }
  }
  template <int T>
  __attribute__((always_inline)) inline static void gemv_chunk(svint8_t a_lo, svint8_t a_hi, const uint8_t* w,
                                                              svint8_t mask) __arm_streaming __arm_inout("za") {
    const svint8x4_t v = load_chunk(w);
    svdot_lane_za32_s8_vg1x4(0, high_nibbles(v, mask), a_hi, T);
    svdot_lane_za32_s8_vg1x4(0, low_nibbles(v), a_lo, T);
  }
  // GEMV, per 32-block: LD1RQB ×2, 4 × (LD1B×4, SRSHL×4, 4 AND, 2 SDOT lane).
  __attribute__((always_inline)) inline static void gemv_acc(size_t k, const uint8_t* lhs, const uint8_t* rhs)
      __arm_streaming __arm_inout("za") {
    const size_t nr = 4 * svcntw(), kp = kpad(k);
    const svint8_t mask = high_mask();
    for (size_t c = 0; c < kp; c += 32) {
      const svint8_t a_lo = svld1rq_s8(svptrue_b8(), reinterpret_cast<const int8_t*>(lhs + c));
      const svint8_t a_hi = svld1rq_s8(svptrue_b8(), reinterpret_cast<const int8_t*>(lhs + c + 16));
      const uint8_t* w = rhs + c / 2 * nr;
      gemv_chunk<0>(a_lo, a_hi, w, mask);
      gemv_chunk<1>(a_lo, a_hi, w + nr * 4, mask);
      gemv_chunk<2>(a_lo, a_hi, w + nr * 8, mask);
      gemv_chunk<3>(a_lo, a_hi, w + nr * 12, mask);
    }
  }
};

struct Qc4Kai {
  __attribute__((always_inline)) static size_t data_bytes(size_t nr, size_t k) __arm_streaming_compatible {
    return nr * kpad(k) / 2;
  }
  __attribute__((always_inline)) inline static void load_table() __arm_streaming __arm_preserves("za")
      __arm_inout("zt0") {
    static const int32_t lut[16] = {0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1};  // signed int4
    svldr_zt(0, lut);
  }
  // GEMM, per 32 K (kpad(k) is a multiple of 32): LD1B×4 ×2 LHS, 8 × (LD1B×2, 2 LUTI4, 4 SMOPA),
  // two pointer steps (ADDVL).
  __attribute__((always_inline)) inline static void gemm_acc(size_t k, const uint8_t* lhs, const uint8_t* rhs)
      __arm_streaming __arm_inout("za") __arm_in("zt0") {
    const size_t vl = svcntw(), nr = 4 * vl, kp = kpad(k);
    const svcount_t all = svptrue_c8();
    const ChunkOffsets o = chunk_offsets(nr * 2);  // chunks of nr·2 bytes; o.c[2] = 16·VL: the second LHS quadruple
    const auto* a = reinterpret_cast<const int8_t*>(lhs);
    for (size_t c = 0; c < kp; c += 32, a += 32 * vl, rhs += 16 * nr) {
      const svint8x4_t a0 = svld1_s8_x4(all, a), a1 = svld1_s8_x4(all, a + o.c[2]);
      mopa4(svget4(a0, 0), sme2::luti4_x4(rhs));
      mopa4(svget4(a0, 1), sme2::luti4_x4(rhs + o.c[1]));
      mopa4(svget4(a0, 2), sme2::luti4_x4(rhs + o.c[2]));
      mopa4(svget4(a0, 3), sme2::luti4_x4(rhs + o.c[3]));
      mopa4(svget4(a1, 0), sme2::luti4_x4(rhs + o.c[4]));
      mopa4(svget4(a1, 1), sme2::luti4_x4(rhs + o.c[5]));
      mopa4(svget4(a1, 2), sme2::luti4_x4(rhs + o.c[6]));
      mopa4(svget4(a1, 3), sme2::luti4_x4(rhs + o.c[7]));
    }
  }
  // GEMV, per 32 K: LD1RQB ×2, 8 × (LD1B×2, 2 LUTI4, SDOT lane).
  __attribute__((always_inline)) inline static void gemv_acc(size_t k, const uint8_t* lhs, const uint8_t* rhs)
      __arm_streaming __arm_inout("za") __arm_in("zt0") {
    const size_t nr = 4 * svcntw(), kp = kpad(k);
    const ChunkOffsets o = chunk_offsets(nr * 2);
    const auto* a = reinterpret_cast<const int8_t*>(lhs);
    for (size_t c = 0; c < kp; c += 32, a += 32, rhs += 16 * nr) {
      const svint8_t a0 = svld1rq_s8(svptrue_b8(), a), a1 = svld1rq_s8(svptrue_b8(), a + 16);
      svdot_lane_za32_s8_vg1x4(0, sme2::luti4_x4(rhs), a0, 0);
      svdot_lane_za32_s8_vg1x4(0, sme2::luti4_x4(rhs + o.c[1]), a0, 1);
      svdot_lane_za32_s8_vg1x4(0, sme2::luti4_x4(rhs + o.c[2]), a0, 2);
      svdot_lane_za32_s8_vg1x4(0, sme2::luti4_x4(rhs + o.c[3]), a0, 3);
      svdot_lane_za32_s8_vg1x4(0, sme2::luti4_x4(rhs + o.c[4]), a1, 0);
      svdot_lane_za32_s8_vg1x4(0, sme2::luti4_x4(rhs + o.c[5]), a1, 1);
      svdot_lane_za32_s8_vg1x4(0, sme2::luti4_x4(rhs + o.c[6]), a1, 2);
      svdot_lane_za32_s8_vg1x4(0, sme2::luti4_x4(rhs + o.c[7]), a1, 3);
    }
  }
};

// ---- GEMM: m × n in VL × 4·VL tiles --------------------------------------------------------

template <class W>
__attribute__((always_inline)) inline void gemm(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                const void* rhs_packed, float* dst, size_t stride, float lo,
                                                float hi) __arm_streaming __arm_inout("za") __arm_in("zt0") {
  const size_t vl = svcntw(), nr = 4 * vl, kp = kpad(k);
  const size_t lhs_panel = vl * (kp + 8), rhs_data = W::data_bytes(nr, k), rhs_panel = rhs_data + nr * 12;
  const svfloat32_t vlo = svdup_f32(lo), vhi = svdup_f32(hi);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += nr, rhs += rhs_panel) {
    const svcount_t cols = svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(n), 4);
    const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
    for (size_t m0 = 0; m0 < m; m0 += vl, lhs += lhs_panel) {
      svzero_za();
      W::gemm_acc(k, lhs, rhs);
      const auto* neg_zp = reinterpret_cast<const int32_t*>(lhs + vl * kp);
      const auto* s_lhs = reinterpret_cast<const float*>(lhs + vl * (kp + 4));
      const size_t rows = m - m0 < vl ? m - m0 : vl;
      float* out = row_ptr(dst, stride, m0) + n0;
      for (size_t i = 0; i < rows; ++i) {
        // Row i of ZA0.S..ZA3.S: ZA0.B slices 4i..4i+3 (one MOVA ×4).
        const svint8x4_t za = svread_hor_za8_s8_vg4(0, static_cast<uint32_t>(4 * i));
        const svint32x4_t acc = svcreate4(svreinterpret_s32(svget4(za, 0)), svreinterpret_s32(svget4(za, 1)),
                                          svreinterpret_s32(svget4(za, 2)), svreinterpret_s32(svget4(za, 3)));
        store_row<false>(acc, rhs + rhs_data, nr, neg_zp[i], s_lhs[i], cols, row_ptr(out, stride, i), vlo, vhi);
      }
    }
  }
}

// ---- GEMV: each row of m against 4·VL columns at a time ------------------------------------

template <class W>
__attribute__((always_inline)) inline void gemv(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                const void* rhs_packed, float* dst, size_t stride, float lo,
                                                float hi) __arm_streaming __arm_inout("za") __arm_in("zt0") {
  const size_t nr = 4 * svcntw(), kp = kpad(k);
  const size_t lhs_row = kp + 8, rhs_data = W::data_bytes(nr, k), rhs_panel = rhs_data + nr * 12;
  const svfloat32_t vlo = svdup_f32(lo), vhi = svdup_f32(hi);
  const svint32_t zero = svdup_s32(0);
  for (size_t i = 0; i < m; ++i) {
    const auto* lhs = static_cast<const uint8_t*>(lhs_packed) + i * lhs_row;
    int32_t neg_zp;
    float s_lhs;
    __builtin_memcpy(&neg_zp, lhs + kp, 4);
    __builtin_memcpy(&s_lhs, lhs + kp + 4, 4);
    const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
    for (size_t n0 = 0; n0 < n; n0 += nr, rhs += rhs_panel) {
      const svcount_t cols = svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(n), 4);
      svwrite_za32_s32_vg1x4(0, svcreate4(zero, zero, zero, zero));
      W::gemv_acc(k, lhs, rhs);
      store_row<true>(svread_za32_s32_vg1x4(0), rhs + rhs_data, nr, neg_zp, s_lhs, cols, row_ptr(dst, stride, i) + n0,
                vlo, vhi);
    }
  }
}

}  // namespace
}  // namespace qmm::sme2ch
