#include "kernels/arm/matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa.h"

#include <arm_sme.h>

#include "kernels/arm/lhs_pack_f16pmrx2_f32_neon.h"
#include "kernels/arm/sme2_clamp.h"
#include "kernels/ref/matmul_clamp_f32_f16p_qsi4c32p_scalar.h"
#include "kernels/ref/rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

// ZT0 for LUTI4 {4 × .H}: entry i (32 bits, the low half read) = the F16 bits of i − 8, the
// Q4_0 zero point folded in.
alignas(64) constexpr uint32_t kF16Nibbles[16] = {0xc800, 0xc700, 0xc600, 0xc500, 0xc400, 0xc200, 0xc000, 0xbc00,
                                                  0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700};

// One quad (4 K) of the tile: the F16 weights of K 0-1 (LUTI4 of the low bytes) and K 2-3 (high
// bytes), times the scales of their columns, as FMOPA operands against the LHS pairs a01, a23.
__attribute__((always_inline)) inline void quad(svuint8x2_t w, svfloat16_t a01, svfloat16_t a23, svfloat16x4_t d,
                                                svbool_t all) __arm_streaming __arm_inout("za") __arm_in("zt0") {
  const svfloat16x4_t lo = svluti4_lane_zt_f16_x4(0, svget2(w, 0), 0);
  const svfloat16x4_t hi = svluti4_lane_zt_f16_x4(0, svget2(w, 1), 0);
  svmopa_za32_f16_m(0, all, all, a01, svmul_f16_x(all, svget4(lo, 0), svget4(d, 0)));
  svmopa_za32_f16_m(1, all, all, a01, svmul_f16_x(all, svget4(lo, 1), svget4(d, 1)));
  svmopa_za32_f16_m(2, all, all, a01, svmul_f16_x(all, svget4(lo, 2), svget4(d, 2)));
  svmopa_za32_f16_m(3, all, all, a01, svmul_f16_x(all, svget4(lo, 3), svget4(d, 3)));
  svmopa_za32_f16_m(0, all, all, a23, svmul_f16_x(all, svget4(hi, 0), svget4(d, 0)));
  svmopa_za32_f16_m(1, all, all, a23, svmul_f16_x(all, svget4(hi, 1), svget4(d, 1)));
  svmopa_za32_f16_m(2, all, all, a23, svmul_f16_x(all, svget4(hi, 2), svget4(d, 2)));
  svmopa_za32_f16_m(3, all, all, a23, svmul_f16_x(all, svget4(hi, 3), svget4(d, 3)));
}

__arm_new("za", "zt0") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                         const void* rhs_packed, float* dst, size_t stride, float lo,
                                                         float hi) {
  svldr_zt(0, kF16Nibbles);
  const size_t vl = svcntw(), nr = 4 * vl, blocks = k / kBlock;
  const svbool_t all = svptrue_b16(), all8 = svptrue_b8();
  const svcount_t all16c = svptrue_c16(), all8c = svptrue_c8();
  const svfloat32_t vlo = svdup_f32(lo), vhi = svdup_f32(hi);
  const sme2::ChunkOffsets o = sme2::chunk_offsets(16 * vl);  // bytes of 4 LHS pair vectors
  const size_t nibble_bytes = nr * blocks * (kBlock / 2), lhs_panel = vl * k * 2;
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += nr, rhs += nibble_bytes + nr * blocks * 2) {
    const svcount_t cols = svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(n), 4);
    const auto* scales = reinterpret_cast<const float16_t*>(rhs + nibble_bytes);
    const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
    for (size_t m0 = 0; m0 < m; m0 += vl, lhs += lhs_panel) {
      svzero_za();
      const uint8_t* w = rhs;
      const uint8_t* a = lhs;
      const float16_t* s = scales;
      for (size_t b = 0; b < blocks; ++b, w += nr * (kBlock / 2), a += kBlock * vl * 2, s += nr) {
        // Each column's scale in both F16 lanes of its 32-bit element: columns 0..VL-1 in d[0].
        const svfloat16x2_t d2 = svld1_f16_x2(all16c, s);
        const svfloat16x2_t d01 = svzip_f16_x2(svcreate2(svget2(d2, 0), svget2(d2, 0)));
        const svfloat16x2_t d23 = svzip_f16_x2(svcreate2(svget2(d2, 1), svget2(d2, 1)));
        const svfloat16x4_t d = svcreate4(svget2(d01, 0), svget2(d01, 1), svget2(d23, 0), svget2(d23, 1));
        // Two quads per LHS load (4 pair vectors at a register offset), 8 quads per block; the
        // RHS quads at LD2B immediates.
        for (int64_t h = 0; h < 4; ++h) {
          const svuint8x4_t a4 = svld1_u8_x4(all8c, a + o.c[h]);  // LD1B: clang 19 takes the register offset there
          quad(svld2_vnum_u8(all8, w, 4 * h), svreinterpret_f16(svget4(a4, 0)), svreinterpret_f16(svget4(a4, 1)), d, all);
          quad(svld2_vnum_u8(all8, w, 4 * h + 2), svreinterpret_f16(svget4(a4, 2)), svreinterpret_f16(svget4(a4, 3)), d,
               all);
        }
      }
      const size_t rows = m - m0 < vl ? m - m0 : vl;
      float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + m0 * stride) + n0;
      for (size_t i = 0; i < rows; ++i, out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(out) + stride)) {
        // Row i of the four tiles (ZA array rows 4i..4i+3): columns 0..4·VL-1 in order.
        const svint8x4_t za = svread_hor_za8_s8_vg4(0, static_cast<uint32_t>(4 * i));
        const svfloat32x4_t acc = svcreate4(svreinterpret_f32(svget4(za, 0)), svreinterpret_f32(svget4(za, 1)),
                                            svreinterpret_f32(svget4(za, 2)), svreinterpret_f32(svget4(za, 3)));
        svst1_f32_x4(cols, out, sme2::clamp_x4(acc, vlo, vhi));
      }
    }
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa = {
    "matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa",
    Isa::sme2,
    WeightType::q4_0,
    false,
    sme2_q4_gemm_params,
    &lhs_pack_f16pmrx2_f32_neon,
    &rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0,
    run,
    &matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar};

}  // namespace qmm
