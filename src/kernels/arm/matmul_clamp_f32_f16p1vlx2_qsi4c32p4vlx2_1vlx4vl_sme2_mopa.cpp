#include "kernels/arm/matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa.h"

#include <arm_sme.h>

#include "kernels/arm/lhs_pack_f16pmrx2_f32_neon.h"
#include "kernels/arm/sme2_f16_panels.h"
#include "kernels/ref/matmul_clamp_f32_f16p_qsi4c32p_scalar.h"
#include "kernels/ref/rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

using namespace sme2;

// Per call: the F16 GEMMs' shared arguments, and the Q4_0 packing's block count and nibble bytes
// per panel (the f16 block scales follow the nibbles).
struct Call : F16Call {
  size_t blocks, nibble_bytes;
};

// ZT0 for LUTI4 {4 × .H}: entry i (32 bits, the low half read) = the F16 bits of i − 8, the
// Q4_0 zero point folded in.
alignas(64) constexpr uint32_t kF16Nibbles[16] = {0xc800, 0xc700, 0xc600, 0xc500, 0xc400, 0xc200, 0xc000, 0xbc00,
                                                  0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700};

// F16 weights: the LUTI4 lookups (F16 -8..7) times each column's block scale d.
__attribute__((always_inline)) inline svfloat16x4_t scaled(svfloat16x4_t v, svfloat16x4_t d, svbool_t all)
    __arm_streaming __arm_preserves("za") {
  return svcreate4(svmul_f16_x(all, svget4(v, 0), svget4(d, 0)), svmul_f16_x(all, svget4(v, 1), svget4(d, 1)),
                   svmul_f16_x(all, svget4(v, 2), svget4(d, 2)), svmul_f16_x(all, svget4(v, 3), svget4(d, 3)));
}

// One quad straight from the packed nibbles w (LD2B: the low bytes hold K 0-1 of columns
// 0..4·VL-1, the high bytes K 2-3), LUTI4 {4 × .H} of each. Here and in `panels` both lookups
// come first: clang 19 dropped the first LUTI4 {4 vectors} of a quad, and all computed from it,
// when its result was scaled and stored before the second lookup was issued
// (Sme2Kernels.RowTilesTogetherGiveEachTilesBits caught it).
__attribute__((always_inline)) inline void quad(svuint8x2_t w, svfloat16_t a01, svfloat16_t a23, svfloat16x4_t d,
                                                svbool_t all) __arm_streaming __arm_inout("za") __arm_in("zt0") {
  const svfloat16x4_t lo = svluti4_lane_zt_f16_x4(0, svget2(w, 0), 0);
  const svfloat16x4_t hi = svluti4_lane_zt_f16_x4(0, svget2(w, 1), 0);
  mopa_f16(scaled(lo, d, all), scaled(hi, d, all), a01, a23, all);
}

// One row tile (m ≤ VL): each quad's weights dequantized in registers and used once.
// Per 4 K: LD2B (immediate offset), 2 LUTI4, 8 FMUL, 8 FMOPA, half an LHS LD1B ×4.
__attribute__((always_inline)) inline void direct(const Call& c, const uint8_t* rhs) __arm_streaming __arm_inout("za")
    __arm_in("zt0") {
  const svbool_t all = svptrue_b16(), all8 = svptrue_b8();
  const svcount_t all16c = svptrue_c16(), all8c = svptrue_c8();
  const sme2::ChunkOffsets o = sme2::chunk_offsets(16 * c.vl);  // bytes of 4 LHS pair vectors
  for (size_t n0 = 0; n0 < c.n; n0 += c.nr, rhs += c.nibble_bytes + c.nr * c.blocks * 2) {
    const auto* scales = reinterpret_cast<const float16_t*>(rhs + c.nibble_bytes);
    const uint8_t* lhs = c.lhs;
    for (size_t m0 = 0; m0 < c.m; m0 += c.vl, lhs += c.lhs_panel) {
      svzero_za();
      const uint8_t* w = rhs;
      const uint8_t* a = lhs;
      const float16_t* s = scales;
      for (size_t b = 0; b < c.blocks; ++b, w += c.nr * (kBlock / 2), a += kBlock * c.vl * 2, s += c.nr) {
        const svfloat16x4_t d = pair_factors(s, all16c);
        // Two quads per LHS load (4 pair vectors at a register offset), 8 quads per block; the
        // RHS quads at LD2B immediates.
        for (int64_t h = 0; h < 4; ++h) {
          const svuint8x4_t a4 = svld1_u8_x4(all8c, a + o.c[h]);  // LD1B: clang 19 takes the register offset there
          quad(svld2_vnum_u8(all8, w, 4 * h), svreinterpret_f16(svget4(a4, 0)), svreinterpret_f16(svget4(a4, 1)), d, all);
          quad(svld2_vnum_u8(all8, w, 4 * h + 2), svreinterpret_f16(svget4(a4, 2)), svreinterpret_f16(svget4(a4, 3)), d,
               all);
        }
      }
      store_tile(c, m0, n0, true);
    }
  }
}

// Several row tiles (m > VL): per panel and slice of k, the weights dequantized once into the
// stack buffer (per quad: LD2B, 2 LUTI4, 8 FMUL, ST1B ×4 ×2), then every row tile reads them
// back: per 4 K LD1B ×4 ×2 (the 8 F16 weight vectors), 8 FMOPA and half an LHS LD1B ×4. A tile's
// sums go through dst between slices (F32, exact), so every output keeps the direct path's
// bits: the same F16 weights, the same FMOPA order along k.
__attribute__((always_inline)) inline void panels(const Call& c, const uint8_t* rhs) __arm_streaming __arm_inout("za")
    __arm_in("zt0") {
  alignas(64) uint8_t buf[kF16PanelBytes];
  const svbool_t all = svptrue_b16(), all8 = svptrue_b8();
  const svcount_t all16c = svptrue_c16(), all8c = svptrue_c8();
  const size_t chunk = 16 * c.vl;  // bytes of 4 F16 weight vectors (half a quad)
  // as many whole blocks of a panel as fit: 256·VL bytes a block (k 512 at SVL 512 in two
  // slices, k 2048 at 128 in one)
  const size_t block_bytes = 16 * chunk, slice = kF16PanelBytes / block_bytes > 0 ? kF16PanelBytes / block_bytes : 1;
  for (size_t n0 = 0; n0 < c.n; n0 += c.nr, rhs += c.nibble_bytes + c.nr * c.blocks * 2) {
    const auto* scales = reinterpret_cast<const float16_t*>(rhs + c.nibble_bytes);
    for (size_t b0 = 0; b0 < c.blocks; b0 += slice) {
      const size_t blocks = c.blocks - b0 < slice ? c.blocks - b0 : slice;
      const uint8_t* w = rhs + b0 * c.nr * (kBlock / 2);
      const float16_t* s = scales + b0 * c.nr;
      uint8_t* p = buf;
      for (size_t b = 0; b < blocks; ++b, w += c.nr * (kBlock / 2), s += c.nr) {
        const svfloat16x4_t d = pair_factors(s, all16c);
        for (int64_t q = 0; q < 8; ++q) {
          const svuint8x2_t q2 = svld2_vnum_u8(all8, w, 2 * q);
          const svfloat16x4_t lo = svluti4_lane_zt_f16_x4(0, svget2(q2, 0), 0);
          const svfloat16x4_t hi = svluti4_lane_zt_f16_x4(0, svget2(q2, 1), 0);
          svst1_u8_x4(all8c, p, as_u8(scaled(lo, d, all)));
          p += chunk;
          svst1_u8_x4(all8c, p, as_u8(scaled(hi, d, all)));
          p += chunk;
        }
      }
      row_tiles(c, buf, b0 * kBlock, blocks, n0);
    }
  }
}

__arm_new("za", "zt0") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                         const void* rhs_packed, float* dst, size_t stride, float lo,
                                                         float hi) {
  svldr_zt(0, kF16Nibbles);
  const size_t vl = svcntw(), nr = 4 * vl, blocks = k / kBlock;
  const Call c{{m, n, k, vl, nr, vl * k * 2, stride, static_cast<const uint8_t*>(lhs_packed), dst, lo, hi},
               blocks,
               nr * blocks * (kBlock / 2)};
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  if (m > vl) {
    panels(c, rhs);
  } else {
    direct(c, rhs);
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
