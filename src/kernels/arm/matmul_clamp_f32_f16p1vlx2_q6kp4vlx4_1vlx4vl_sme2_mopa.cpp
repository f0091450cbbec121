#include "kernels/arm/matmul_clamp_f32_f16p1vlx2_q6kp4vlx4_1vlx4vl_sme2_mopa.h"

#include <arm_sme.h>

#include "core/kquants.h"
#include "kernels/arm/lhs_pack_f16pmrx2_f32_neon.h"
#include "kernels/arm/sme2_f16_panels.h"
#include "kernels/ref/layouts_k.h"
#include "kernels/ref/matmul_clamp_f32_f16p_q6kp_scalar.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

using namespace sme2;

// F16 1024 + q minus 1056: q − 32, exactly (sme2_f16_panels.h f16_1024_plus).
constexpr float kBias = 1056.0f;

// The 6-bit q (bits 0..5, bits 6..7 zero) of 32-block t of a half: the low (t < 2) or high
// nibble of ql, bits 2t, 2t + 1 of qh on bits 4, 5 (ggml's dequantize_row_q6_K). 2 or 3 ops.
template <int kT>
__attribute__((always_inline)) inline svuint8_t six_bits(svuint16_t ql16, svuint16_t qh16) __arm_streaming
    __arm_preserves("za") {
  const svbool_t all8 = svptrue_b8();
  const svuint8_t ql = svreinterpret_u8(ql16), qh = svreinterpret_u8(qh16);
  if constexpr (kT == 0) return svand_n_u8_x(all8, svsli_n_u8(ql, qh, 4), 0x3f);
  if constexpr (kT == 1) return svand_n_u8_x(all8, svsli_n_u8(ql, svlsr_n_u8_x(all8, qh, 2), 4), 0x3f);
  if constexpr (kT == 2) return svand_n_u8_x(all8, svsri_n_u8(qh, ql, 4), 0x3f);
  return svsri_n_u8(svlsr_n_u8_x(all8, qh, 2), ql, 4);  // kT == 3: bits 6, 7 shifted in as zero
}

// One K pair of all 4 tiles from its 6-bit q of columns 0..2VL-1 (q01) and 2VL..4VL-1 (q23):
// (1024 + q − 1056) · s, the FSUB exact, the FMUL one rounding.
__attribute__((always_inline)) inline svuint8x4_t pair_weights(svuint8_t q01, svuint8_t q23, svfloat16x4_t s,
                                                               svfloat16_t bias) __arm_streaming
    __arm_preserves("za") {
  const svbool_t all = svptrue_b16();
  const svfloat16x4_t x = f16_1024_plus(q01, q23);
  return as_u8(svcreate4(svmul_f16_x(all, svsub_f16_x(all, svget4(x, 0), bias), svget4(s, 0)),
                         svmul_f16_x(all, svsub_f16_x(all, svget4(x, 1), bias), svget4(s, 1)),
                         svmul_f16_x(all, svsub_f16_x(all, svget4(x, 2), bias), svget4(s, 2)),
                         svmul_f16_x(all, svsub_f16_x(all, svget4(x, 3), bias), svget4(s, 3))));
}

// 4-byte chunk v of 32-block t (K 4v..4v+3 of every column) into its 2 K pairs at out and
// out + pair_bytes. Column r's 4 bytes sit at 4r: LD2H over 2·VL columns gives the halfwords
// of bytes 0, 1 (K pair 4v, 4v+1) and of bytes 2, 3 (4v+2, 4v+3), the FMOPA operand's order.
template <int kT>
__attribute__((always_inline)) inline void dequantize_chunk(const uint8_t* ql, const uint8_t* qh, svfloat16x4_t s,
                                                            svfloat16_t bias, uint8_t* out,
                                                            size_t pair_bytes) __arm_streaming __arm_preserves("za") {
  const svbool_t all16 = svptrue_b16();
  const svcount_t all8c = svptrue_c8();
  const auto* l = reinterpret_cast<const uint16_t*>(ql);
  const auto* h = reinterpret_cast<const uint16_t*>(qh);
  const svuint16x2_t l01 = svld2_u16(all16, l), l23 = svld2_vnum_u16(all16, l, 2);
  const svuint16x2_t h01 = svld2_u16(all16, h), h23 = svld2_vnum_u16(all16, h, 2);
  svst1_u8_x4(all8c, out, pair_weights(six_bits<kT>(svget2(l01, 0), svget2(h01, 0)),
                                       six_bits<kT>(svget2(l23, 0), svget2(h23, 0)), s, bias));
  svst1_u8_x4(all8c, out + pair_bytes, pair_weights(six_bits<kT>(svget2(l01, 1), svget2(h01, 1)),
                                                    six_bits<kT>(svget2(l23, 1), svget2(h23, 1)), s, bias));
}

// 32-block t of half h of super-block sb (K 128h + 32t..) into its 16 K pairs at out: ql chunks
// 16h + 8(t % 2) + v, qh chunks 32 + 8h + v (v < 8), scale groups 8h + 2t (v < 4) and + 1.
template <int kT>
__attribute__((always_inline)) inline void dequantize_block(const uint8_t* sb, size_t nr, size_t h, svfloat16x4_t d,
                                                            svfloat16_t bias, uint8_t* out,
                                                            const ChunkOffsets& o) __arm_streaming
    __arm_preserves("za") {
  const svbool_t all = svptrue_b16();
  const uint8_t* ql = sb + (16 * h + 8 * (kT % 2)) * 4 * nr;
  const uint8_t* qh = sb + (32 + 8 * h) * 4 * nr;
  const uint8_t* sc = sb + 192 * nr + nr * (8 * h + 2 * kT);
  for (size_t half = 0; half < 2; ++half, sc += nr) {
    const svfloat16x4_t s = factors(reinterpret_cast<const int8_t*>(sc), d, all);  // f16(d·sc)
    for (int64_t v = 0; v < 4; ++v, ql += 4 * nr, qh += 4 * nr, out += o.c[2]) {
      dequantize_chunk<kT>(ql, qh, s, bias, out, o.c[1]);
    }
  }
}

// Group g (64 K: 32-blocks 2g, 2g + 1 of the super-block, g < 4) of a panel into buf as F16
// pairs, K-major (sme2_f16_panels.h).
__attribute__((always_inline)) inline void dequantize_group(const uint8_t* sb, size_t nr, size_t g, uint8_t* out,
                                                            const ChunkOffsets& o) __arm_streaming
    __arm_preserves("za") {
  const svfloat16x4_t d = pair_factors(sb + 208 * nr, svptrue_c16());
  const svfloat16_t bias = svdup_n_f16(static_cast<float16_t>(kBias));
  uint8_t* odd = out + 4 * o.c[4];  // pairs 16..31 (o.c[4]: 4 pairs)
  if (g % 2 == 0) {
    dequantize_block<0>(sb, nr, g / 2, d, bias, out, o);
    dequantize_block<1>(sb, nr, g / 2, d, bias, odd, o);
  } else {
    dequantize_block<2>(sb, nr, g / 2, d, bias, out, o);
    dequantize_block<3>(sb, nr, g / 2, d, bias, odd, o);
  }
}

__arm_new("za") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                  const void* rhs_packed, float* dst, size_t stride, float lo,
                                                  float hi) {
  alignas(64) uint8_t buf[kF16PanelBytes];
  const size_t vl = svcntw(), nr = 4 * vl, supers = k / kSuperBlock, groups = 4 * supers;
  const F16Call c{m, n, k, vl, nr, vl * k * 2, stride, static_cast<const uint8_t*>(lhs_packed), dst, lo, hi};
  const ChunkOffsets o = chunk_offsets(16 * vl);  // one F16 pair of all 4 tiles
  const size_t group_bytes = 32 * 16 * vl;        // 64 K of F16 weights: 512·VL bytes
  const size_t slice = kF16PanelBytes / group_bytes > 0 ? kF16PanelBytes / group_bytes : 1;  // 16 at SVL 128, 1 at 2048
  const size_t sb_bytes = layout::kQ6kpBytes * nr;
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += nr, rhs += supers * sb_bytes) {
    for (size_t g0 = 0; g0 < groups; g0 += slice) {
      const size_t count = groups - g0 < slice ? groups - g0 : slice;
      uint8_t* p = buf;
      for (size_t g = g0; g < g0 + count; ++g, p += group_bytes) {
        dequantize_group(rhs + g / 4 * sb_bytes, nr, g % 4, p, o);
      }
      row_tiles(c, buf, g0 * 64, 2 * count, n0);
    }
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_f16p1vlx2_q6kp4vlx4_1vlx4vl_sme2_mopa = {
    "matmul_clamp_f32_f16p1vlx2_q6kp4vlx4_1vlx4vl_sme2_mopa",
    Isa::sme2,
    WeightType::q6_k,
    false,
    sme2_q4_gemm_params,
    &lhs_pack_f16pmrx2_f32_neon,
    &rhs_pack_nxk_q6kp_q6k,
    run,
    &matmul_clamp_f32_f16p4x2_q6kp8x4_4x8_scalar};

}  // namespace qmm
