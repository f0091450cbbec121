#include "kernels/arm/matmul_clamp_f32_f16p1vlx2_q5kp4vlx4_1vlx4vl_sme2_mopa.h"

#include <arm_sme.h>

#include "core/kquants.h"
#include "kernels/arm/lhs_pack_f16pmrx2_f32_neon.h"
#include "kernels/arm/sme2_f16_panels.h"
#include "kernels/ref/layouts_k.h"
#include "kernels/ref/matmul_clamp_f32_f16p_q5kp_scalar.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

using namespace sme2;

// F16 1024 + q minus 1024: q, exactly (sme2_f16_panels.h f16_1024_plus).
constexpr float kBias = 1024.0f;

// The 5-bit q (bits 5..7 zero) of sub-block j of a super-block: the low (j even) or high nibble
// of qs, bit j of qh on bit 4 (ggml's dequantize_row_q5_K). 2 or 3 ops.
template <int kJ>
__attribute__((always_inline)) inline svuint8_t five_bits(svuint16_t qs16, svuint16_t qh16) __arm_streaming
    __arm_preserves("za") {
  const svbool_t all8 = svptrue_b8();
  const svuint8_t qs = svreinterpret_u8(qs16), qh = svreinterpret_u8(qh16);
  if constexpr (kJ % 2 == 0) {  // SLI: bits 4..7 = qh bits j..j+3
    const svuint8_t h = kJ == 0 ? qh : svlsr_n_u8_x(all8, qh, kJ);
    return svand_n_u8_x(all8, svsli_n_u8(qs, h, 4), 0x1f);
  } else {  // SRI: (bit j of qh on bit 4, with what lies above it) | qs >> 4
    const svuint8_t h = kJ < 4 ? svlsl_n_u8_x(all8, qh, 4 - kJ) : svlsr_n_u8_x(all8, qh, kJ - 4);
    const svuint8_t x = svsri_n_u8(h, qs, 4);
    return kJ == 7 ? x : svand_n_u8_x(all8, x, 0x1f);  // j = 7: bits 5..7 shifted in as zero
  }
}

// One K pair of all 4 tiles from its 5-bit q of columns 0..2VL-1 (q01) and 2VL..4VL-1 (q23):
// q·f16(d·sc) − f16(dmin·m) with one rounding (the FSUB exact; FMAD, sme2_f16_panels.h).
__attribute__((always_inline)) inline svuint8x4_t pair_weights(svuint8_t q01, svuint8_t q23, svfloat16x4_t s,
                                                               svfloat16x4_t neg_mn, svfloat16_t bias)
    __arm_streaming __arm_preserves("za") {
  const svbool_t all = svptrue_b16();
  const svfloat16x4_t x = f16_1024_plus(q01, q23);
  return weights(svcreate4(svsub_f16_x(all, svget4(x, 0), bias), svsub_f16_x(all, svget4(x, 1), bias),
                           svsub_f16_x(all, svget4(x, 2), bias), svsub_f16_x(all, svget4(x, 3), bias)),
                 s, neg_mn, all);
}

// 4-byte chunk v of sub-block j (K 4v..4v+3 of it, every column) into its 2 K pairs at out and
// out + pair_bytes; LD2H over 2·VL columns as in the F16 Q6_K GEMM.
template <int kJ>
__attribute__((always_inline)) inline void dequantize_chunk(const uint8_t* qs, const uint8_t* qh, svfloat16x4_t s,
                                                            svfloat16x4_t neg_mn, svfloat16_t bias, uint8_t* out,
                                                            size_t pair_bytes) __arm_streaming __arm_preserves("za") {
  const svbool_t all16 = svptrue_b16();
  const svcount_t all8c = svptrue_c8();
  const auto* l = reinterpret_cast<const uint16_t*>(qs);
  const auto* h = reinterpret_cast<const uint16_t*>(qh);
  const svuint16x2_t l01 = svld2_u16(all16, l), l23 = svld2_vnum_u16(all16, l, 2);
  const svuint16x2_t h01 = svld2_u16(all16, h), h23 = svld2_vnum_u16(all16, h, 2);
  svst1_u8_x4(all8c, out, pair_weights(five_bits<kJ>(svget2(l01, 0), svget2(h01, 0)),
                                       five_bits<kJ>(svget2(l23, 0), svget2(h23, 0)), s, neg_mn, bias));
  svst1_u8_x4(all8c, out + pair_bytes, pair_weights(five_bits<kJ>(svget2(l01, 1), svget2(h01, 1)),
                                                    five_bits<kJ>(svget2(l23, 1), svget2(h23, 1)), s, neg_mn, bias));
}

// Sub-block j of super-block sb into its 16 K pairs at out: qs chunks 8(j / 2) + v, qh chunks
// 32 + v (v < 8); its factors f16(d·sc), −f16(dmin·m) kept in registers for the 8 chunks.
template <int kJ>
__attribute__((always_inline)) inline void dequantize_sub_block(const uint8_t* sb, size_t nr, uint8_t* out,
                                                                const ChunkOffsets& o) __arm_streaming
    __arm_preserves("za") {
  const svbool_t all = svptrue_b16();
  const svcount_t all16c = svptrue_c16();
  const svfloat16_t bias = svdup_n_f16(static_cast<float16_t>(kBias));
  const uint8_t* f = sb + 160 * nr + 2 * nr * kJ;  // sc at f, m at f + nr
  const svfloat16x4_t s = factors(f, pair_factors(sb + 176 * nr, all16c), all);
  const svfloat16x4_t neg_mn = factors(f + nr, negated(pair_factors(sb + 178 * nr, all16c), all), all);
  const uint8_t* qs = sb + 8 * (kJ / 2) * 4 * nr;
  const uint8_t* qh = sb + 32 * 4 * nr;
  for (int64_t v = 0; v < 8; ++v, qs += 4 * nr, qh += 4 * nr, out += o.c[2]) {
    dequantize_chunk<kJ>(qs, qh, s, neg_mn, bias, out, o.c[1]);
  }
}

// Group g (64 K: sub-blocks 2g, 2g + 1 of the super-block, g < 4) of a panel into buf as F16
// pairs, K-major (sme2_f16_panels.h): the even sub-block's 16 pairs, then the odd one's.
__attribute__((always_inline)) inline void dequantize_group(const uint8_t* sb, size_t nr, size_t g, uint8_t* out,
                                                            const ChunkOffsets& o) __arm_streaming
    __arm_preserves("za") {
  uint8_t* odd = out + 4 * o.c[4];  // pairs 16..31 (o.c[4]: 4 pairs)
  switch (g) {
    case 0: dequantize_sub_block<0>(sb, nr, out, o); dequantize_sub_block<1>(sb, nr, odd, o); break;
    case 1: dequantize_sub_block<2>(sb, nr, out, o); dequantize_sub_block<3>(sb, nr, odd, o); break;
    case 2: dequantize_sub_block<4>(sb, nr, out, o); dequantize_sub_block<5>(sb, nr, odd, o); break;
    default: dequantize_sub_block<6>(sb, nr, out, o); dequantize_sub_block<7>(sb, nr, odd, o); break;
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
  const size_t sb_bytes = layout::kQ5kpBytes * nr;
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

const Ukernel matmul_clamp_f32_f16p1vlx2_q5kp4vlx4_1vlx4vl_sme2_mopa = {
    "matmul_clamp_f32_f16p1vlx2_q5kp4vlx4_1vlx4vl_sme2_mopa",
    Isa::sme2,
    WeightType::q5_k,
    false,
    sme2_q4_gemm_params,
    &lhs_pack_f16pmrx2_f32_neon,
    &rhs_pack_nxk_q5kp_q5k,
    run,
    &matmul_clamp_f32_f16p4x2_q5kp8x4_4x8_scalar};

}  // namespace qmm
