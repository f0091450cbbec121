// The F16-activation SME2 GEMMs' shared half (Q4_0: matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_…,
// Q4_K: …_f16p1vlx2_q4kp4vlx4_…, Q5_K: …_q5kp…, Q6_K: …_q6kp…): output tile 1VL × 4VL in ZA0.S..ZA3.S, F32
// sums over all of k, the LHS of lhs_pack_f16pmrx2_f32(_neon) (VL rows × 2 K per vector). Each
// kernel dequantizes a panel's weights (a slice of k) once into a stack buffer of F16 pairs,
// K-major: pair P of the slice (K 2P, 2P+1) is 4 vectors, columns 0..4·VL-1 (`pair_bytes` each
// vector set, 16·VL bytes); then `row_tiles` runs every row tile over them: per 32 K, 4 LHS
// LD1B ×4, 16 weight LD1B ×4 at register offsets and 64 FMOPA. Between slices a tile's F32
// sums wait in dst unclamped (exact), so the bits do not depend on the slicing or on m.
// Include only from SME2 sources.
#pragma once
#include <arm_sme.h>

#include <cstddef>
#include <cstdint>

#include "core/blocks.h"
#include "kernels/arm/sme2_clamp.h"

namespace qmm::sme2 {
namespace {  // internal linkage: every kernel file is compiled with its own flags

// The stack buffer of F16 weights: no allocation in a kernel (the microkernel contract).
constexpr size_t kF16PanelBytes = 32 * 1024;

// A quad's 8 FMOPA, the weights k01 / k23 against the LHS pairs a01 / a23: tile t takes columns
// t·VL..t·VL+VL-1.
__attribute__((always_inline)) inline void mopa_f16(svfloat16x4_t k01, svfloat16x4_t k23, svfloat16_t a01,
                                                    svfloat16_t a23, svbool_t all) __arm_streaming
    __arm_inout("za") {
  svmopa_za32_f16_m(0, all, all, a01, svget4(k01, 0));
  svmopa_za32_f16_m(1, all, all, a01, svget4(k01, 1));
  svmopa_za32_f16_m(2, all, all, a01, svget4(k01, 2));
  svmopa_za32_f16_m(3, all, all, a01, svget4(k01, 3));
  svmopa_za32_f16_m(0, all, all, a23, svget4(k23, 0));
  svmopa_za32_f16_m(1, all, all, a23, svget4(k23, 1));
  svmopa_za32_f16_m(2, all, all, a23, svget4(k23, 2));
  svmopa_za32_f16_m(3, all, all, a23, svget4(k23, 3));
}

__attribute__((always_inline)) inline svfloat16x4_t as_f16(svuint8x4_t v) __arm_streaming __arm_preserves("za") {
  return svcreate4(svreinterpret_f16(svget4(v, 0)), svreinterpret_f16(svget4(v, 1)), svreinterpret_f16(svget4(v, 2)),
                   svreinterpret_f16(svget4(v, 3)));
}
__attribute__((always_inline)) inline svuint8x4_t as_u8(svfloat16x4_t v) __arm_streaming __arm_preserves("za") {
  return svcreate4(svreinterpret_u8(svget4(v, 0)), svreinterpret_u8(svget4(v, 1)), svreinterpret_u8(svget4(v, 2)),
                   svreinterpret_u8(svget4(v, 3)));
}

// Small unsigned integers as F16 without a conversion: the halfword 0x6400 | q is F16 1024 + q
// (q < 1024: the mantissa at unit step), so a byte q zipped with the byte 0x64 is 1024 + q and
// one FSUB gives q minus any integer offset exactly. q01 / q23: one K pair of columns 0..2VL-1 /
// 2VL..4VL-1, two bytes per column (K 2P, 2P + 1); the result is that pair of the 4 tiles, each
// column's two F16 in its 32-bit element (the FMOPA operand).
__attribute__((always_inline)) inline svfloat16x4_t f16_1024_plus(svuint8_t q01, svuint8_t q23) __arm_streaming
    __arm_preserves("za") {
  const svuint8_t high = svdup_n_u8(0x64);
  const svuint8x2_t z01 = svzip_u8_x2(svcreate2(q01, high)), z23 = svzip_u8_x2(svcreate2(q23, high));
  return svcreate4(svreinterpret_f16(svget2(z01, 0)), svreinterpret_f16(svget2(z01, 1)),
                   svreinterpret_f16(svget2(z23, 0)), svreinterpret_f16(svget2(z23, 1)));
}

// nr = 4·VL f16 per-column factors at s, each column's in both F16 lanes of its 32-bit element:
// columns t·VL..t·VL+VL-1 in vector t (a FMOPA pair's two weights share the factor).
__attribute__((always_inline)) inline svfloat16x4_t pair_factors(const void* s, svcount_t all16c) __arm_streaming
    __arm_preserves("za") {
  const svfloat16x2_t d2 = svld1_f16_x2(all16c, static_cast<const float16_t*>(s));
  const svfloat16x2_t d01 = svzip_f16_x2(svcreate2(svget2(d2, 0), svget2(d2, 0)));
  const svfloat16x2_t d23 = svzip_f16_x2(svcreate2(svget2(d2, 1), svget2(d2, 1)));
  return svcreate4(svget2(d01, 0), svget2(d01, 1), svget2(d23, 0), svget2(d23, 1));
}

// nr 8-bit integers at p as 16-bit ones: columns 0..2VL-1, 2VL..4VL-1.
__attribute__((always_inline)) inline svuint16x2_t widen(const uint8_t* p) __arm_streaming __arm_preserves("za") {
  return svunpk_u16_u8_x2(svld1_u8(svptrue_b8(), p));
}
__attribute__((always_inline)) inline svint16x2_t widen(const int8_t* p) __arm_streaming __arm_preserves("za") {
  return svunpk_s16_s8_x2(svld1_s8(svptrue_b8(), p));
}

// nr 8-bit factors at p (uint8_t: the 6-bit sc or m of an asymmetric K-quant sub-block, Q4_K /
// Q5_K: w = q·d·sc − dmin·m per 32 K; int8_t: a Q6_K scale of 16 K) times each column's f16 d
// (dmin), rounded once to F16 (the product of an F16 and an 8-bit integer is exact in F32), each
// in both lanes of its column's 32-bit element (tile t in vector t).
template <class T>
__attribute__((always_inline)) inline svfloat16x4_t factors(const T* p, svfloat16x4_t d, svbool_t all) __arm_streaming
    __arm_preserves("za") {
  const auto u = widen(p);
  const auto t01 = svzip(svcreate2(svget2(u, 0), svget2(u, 0)));
  const auto t23 = svzip(svcreate2(svget2(u, 1), svget2(u, 1)));
  return svcreate4(svmul_f16_x(all, svcvt_f16_x(all, svget2(t01, 0)), svget4(d, 0)),
                   svmul_f16_x(all, svcvt_f16_x(all, svget2(t01, 1)), svget4(d, 1)),
                   svmul_f16_x(all, svcvt_f16_x(all, svget2(t23, 0)), svget4(d, 2)),
                   svmul_f16_x(all, svcvt_f16_x(all, svget2(t23, 1)), svget4(d, 3)));
}

// The asymmetric K-quants (Q4_K, Q5_K): F16 weights q·(d·sc) + (−dmin·m), one rounding, for
// the 4 tiles of one K pair: FMAD into q's registers. clang 19 turns svmad / svnmsb into FMLA /
// FNMLS on a copy of the factor, a MOVPRFX each (a third of the dequantization), hence the asm.
__attribute__((always_inline)) inline svfloat16_t fmad(svfloat16_t q, svfloat16_t s, svfloat16_t neg_mn, svbool_t all)
    __arm_streaming __arm_preserves("za") {
  asm("fmad %0.h, %1/m, %2.h, %3.h" : "+w"(q) : "Upl"(all), "w"(s), "w"(neg_mn));
  return q;
}
__attribute__((always_inline)) inline svuint8x4_t weights(svfloat16x4_t q, svfloat16x4_t s, svfloat16x4_t neg_mn,
                                                          svbool_t all) __arm_streaming __arm_preserves("za") {
  return as_u8(svcreate4(fmad(svget4(q, 0), svget4(s, 0), svget4(neg_mn, 0), all),
                         fmad(svget4(q, 1), svget4(s, 1), svget4(neg_mn, 1), all),
                         fmad(svget4(q, 2), svget4(s, 2), svget4(neg_mn, 2), all),
                         fmad(svget4(q, 3), svget4(s, 3), svget4(neg_mn, 3), all)));
}

__attribute__((always_inline)) inline svfloat16x4_t negated(svfloat16x4_t v, svbool_t all) __arm_streaming
    __arm_preserves("za") {
  return svcreate4(svneg_f16_x(all, svget4(v, 0)), svneg_f16_x(all, svget4(v, 1)), svneg_f16_x(all, svget4(v, 2)),
                   svneg_f16_x(all, svget4(v, 3)));
}

// Row i of the four tiles is ZA array rows 4i..4i+3: columns 0..4·VL-1 of output row i.
__attribute__((always_inline)) inline svfloat32x4_t za_row(size_t i) __arm_streaming __arm_in("za") {
  const svint8x4_t za = svread_hor_za8_s8_vg4(0, static_cast<uint32_t>(4 * i));
  return svcreate4(svreinterpret_f32(svget4(za, 0)), svreinterpret_f32(svget4(za, 1)), svreinterpret_f32(svget4(za, 2)),
                   svreinterpret_f32(svget4(za, 3)));
}

struct F16Call {
  size_t m, n, k, vl, nr, lhs_panel, stride;
  const uint8_t* lhs;
  float* dst;
  float lo, hi;
  float* out(size_t m0, size_t n0) const {
    return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + m0 * stride) + n0;
  }
};

// The tile's rows into dst: clamped after the last k, as they are (partial sums) before.
__attribute__((always_inline)) inline void store_tile(const F16Call& c, size_t m0, size_t n0, bool last)
    __arm_streaming __arm_in("za") {
  const svcount_t cols = svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(c.n), 4);
  const svfloat32_t vlo = svdup_f32(c.lo), vhi = svdup_f32(c.hi);
  const size_t rows = c.m - m0 < c.vl ? c.m - m0 : c.vl;
  float* out = c.out(m0, n0);
  for (size_t i = 0; i < rows; ++i, out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(out) + c.stride)) {
    svst1_f32_x4(cols, out, last ? clamp_x4(za_row(i), vlo, vhi) : za_row(i));
  }
}

// The partial sums store_tile left in dst back into ZA (rows beyond m stay zero).
__attribute__((always_inline)) inline void load_tile(const F16Call& c, size_t m0, size_t n0) __arm_streaming
    __arm_inout("za") {
  const svcount_t cols = svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(c.n), 4);
  const size_t rows = c.m - m0 < c.vl ? c.m - m0 : c.vl;
  svzero_za();
  const float* out = c.out(m0, n0);
  for (size_t i = 0; i < rows; ++i, out = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(out) + c.stride)) {
    const svfloat32x4_t v = svld1_f32_x4(cols, out);
    svwrite_hor_za8_s8_vg4(0, static_cast<uint32_t>(4 * i),
                           svcreate4(svreinterpret_s8(svget4(v, 0)), svreinterpret_s8(svget4(v, 1)),
                                     svreinterpret_s8(svget4(v, 2)), svreinterpret_s8(svget4(v, 3))));
  }
}

// Every row tile of panel n0 over the slice of k [k0, k0 + 32·blocks) whose F16 weights are in
// buf (K-major pairs, see above): ZA from zero (k0 = 0) or from the sums in dst, then per block
// of 32 K 4 LHS loads and 16 weight loads at register offsets from f and f + 8 pairs, 64 FMOPA.
__attribute__((always_inline)) inline void row_tiles(const F16Call& c, const uint8_t* buf, size_t k0, size_t blocks,
                                                     size_t n0) __arm_streaming __arm_inout("za") {
  const svbool_t all = svptrue_b16();
  const svcount_t all8c = svptrue_c8();
  const size_t chunk = 16 * c.vl;  // bytes of 4 LHS pair vectors = of one pair of F16 weights
  const ChunkOffsets o = chunk_offsets(chunk);
  // 8 and 16 pairs: out of ADDVL's reach, kept in registers (no RDVL per step)
  size_t half_block = 8 * chunk, block_step = 16 * chunk;
  asm("" : "+r"(half_block), "+r"(block_step));
  const bool last = k0 + blocks * kBlock == c.k;
  const uint8_t* lhs = c.lhs + k0 * c.vl * 2;
  for (size_t m0 = 0; m0 < c.m; m0 += c.vl, lhs += c.lhs_panel) {
    if (k0 == 0) {
      svzero_za();
    } else {
      load_tile(c, m0, n0);
    }
    const uint8_t* a = lhs;
    const uint8_t* f = buf;
    for (size_t b = 0; b < blocks; ++b, a += 4 * chunk, f += block_step) {
      const uint8_t* f8 = f + half_block;
      for (int64_t j = 0; j < 4; ++j) {
        const svuint8x4_t a4 = svld1_u8_x4(all8c, a + o.c[j]);
        const uint8_t* fj = j < 2 ? f : f8;
        const int64_t c0 = 4 * (j & 1);
        mopa_f16(as_f16(svld1_u8_x4(all8c, fj + o.c[c0])), as_f16(svld1_u8_x4(all8c, fj + o.c[c0 + 1])),
                 svreinterpret_f16(svget4(a4, 0)), svreinterpret_f16(svget4(a4, 1)), all);
        mopa_f16(as_f16(svld1_u8_x4(all8c, fj + o.c[c0 + 2])), as_f16(svld1_u8_x4(all8c, fj + o.c[c0 + 3])),
                 svreinterpret_f16(svget4(a4, 2)), svreinterpret_f16(svget4(a4, 3)), all);
      }
    }
    store_tile(c, m0, n0, last);
  }
}

}  // namespace
}  // namespace qmm::sme2
