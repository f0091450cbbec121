#include "kernels/arm/matmul_clamp_f32_f16p1vlx2_q4kp4vlx4_1vlx4vl_sme2_mopa.h"

#include <arm_sme.h>

#include "core/kquants.h"
#include "kernels/arm/lhs_pack_f16pmrx2_f32_neon.h"
#include "kernels/arm/sme2_f16_panels.h"
#include "kernels/ref/layouts_k.h"
#include "kernels/ref/matmul_clamp_f32_f16p_q4kp_scalar.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

using namespace sme2;

// ZT0 for LUTI4 {4 × .H}: entry i (32 bits, the low half read) = the F16 bits of i (Q4_K's
// nibbles are unsigned; the sub-block's min is subtracted after the scale).
alignas(64) constexpr uint32_t kF16U4[16] = {0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700,
                                             0x4800, 0x4880, 0x4900, 0x4980, 0x4a00, 0x4a80, 0x4b00, 0x4b80};

// One sub-block of group g (the even one: the low nibbles, K 64g'..64g'+31 of the super-block;
// the odd one: the high nibbles, K 64g'+32..) into its 16 K pairs at out. Per 4-byte chunk v
// (K 4v..4v+3 of every column): LD4B gives byte i of every column; SLI (SRI) by 4 pairs the low
// (high) nibbles of bytes 0, 1 and of bytes 2, 3: K 4v, 4v+1 and 4v+2, 4v+3, each a byte vector
// whose LUTI4 {4 × .H} is one K pair of all 4 tiles, then 4 FNMSB each. One sub-block at a time
// keeps its 8 factor vectors and the lookups in registers (both sub-blocks at once spilled).
template <bool kOdd>
__attribute__((always_inline)) inline void dequantize_sub_block(const uint8_t* q, size_t nr, svfloat16x4_t s,
                                                                svfloat16x4_t mn, uint8_t* out,
                                                                const ChunkOffsets& o) __arm_streaming
    __arm_preserves("za") __arm_in("zt0") {
  const svbool_t all = svptrue_b16(), all8 = svptrue_b8();
  const svcount_t all8c = svptrue_c8();
  for (int64_t v = 0; v < 8; ++v, q += 4 * nr, out += o.c[2]) {
    const svuint8x4_t b = svld4_u8(all8, q);
    const svuint8_t k01 = kOdd ? svsri_n_u8(svget4(b, 1), svget4(b, 0), 4) : svsli_n_u8(svget4(b, 0), svget4(b, 1), 4);
    const svuint8_t k23 = kOdd ? svsri_n_u8(svget4(b, 3), svget4(b, 2), 4) : svsli_n_u8(svget4(b, 2), svget4(b, 3), 4);
    // Both lookups first: clang 19 drops a LUTI4 {4 vectors}, and the stores computed from it,
    // whose result was used and stored before a later lookup was issued (docs/arm.md).
    const svfloat16x4_t w01 = svluti4_lane_zt_f16_x4(0, k01, 0), w23 = svluti4_lane_zt_f16_x4(0, k23, 0);
    svst1_u8_x4(all8c, out, weights(w01, s, mn, all));
    svst1_u8_x4(all8c, out + o.c[1], weights(w23, s, mn, all));
  }
}

// Group g (64 K: sub-blocks 2g', 2g'+1 of super-block sb, g' = g % 4) of a panel into buf as F16
// pairs, K-major (sme2_f16_panels.h): the even sub-block's 16 pairs, then the odd one's.
__attribute__((always_inline)) inline void dequantize_group(const uint8_t* sb, size_t nr, size_t g, uint8_t* out,
                                                            const ChunkOffsets& o) __arm_streaming
    __arm_preserves("za") __arm_in("zt0") {
  const svbool_t all = svptrue_b16();
  const svcount_t all16c = svptrue_c16();
  const uint8_t* f = sb + 128 * nr + 4 * nr * g;  // sc of sub-block 2g at f, m at f + nr, then 2g + 1
  const uint8_t* q = sb + 32 * nr * g;
  {
    const svfloat16x4_t d = pair_factors(sb + 144 * nr, all16c), dmin = negated(pair_factors(sb + 146 * nr, all16c), all);
    dequantize_sub_block<false>(q, nr, factors(f, d, all), factors(f + nr, dmin, all), out, o);
  }
  const svfloat16x4_t d = pair_factors(sb + 144 * nr, all16c), dmin = negated(pair_factors(sb + 146 * nr, all16c), all);
  dequantize_sub_block<true>(q, nr, factors(f + 2 * nr, d, all), factors(f + 3 * nr, dmin, all),
                             out + 4 * o.c[4], o);  // pairs 16..31 (o.c[4]: 4 pairs)
}

__arm_new("za", "zt0") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                         const void* rhs_packed, float* dst, size_t stride, float lo,
                                                         float hi) {
  svldr_zt(0, kF16U4);
  alignas(64) uint8_t buf[kF16PanelBytes];
  const size_t vl = svcntw(), nr = 4 * vl, supers = k / kSuperBlock, groups = 4 * supers;
  const F16Call c{m, n, k, vl, nr, vl * k * 2, stride, static_cast<const uint8_t*>(lhs_packed), dst, lo, hi};
  const ChunkOffsets o = chunk_offsets(16 * vl);  // one F16 pair of all 4 tiles
  const size_t group_bytes = 32 * 16 * vl;        // 64 K of F16 weights: 512·VL bytes
  const size_t slice = kF16PanelBytes / group_bytes > 0 ? kF16PanelBytes / group_bytes : 1;  // 16 at SVL 128, 1 at 2048
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += nr, rhs += supers * layout::kQ4kpBytes * nr) {
    for (size_t g0 = 0; g0 < groups; g0 += slice) {
      const size_t count = groups - g0 < slice ? groups - g0 : slice;
      uint8_t* p = buf;
      for (size_t g = g0; g < g0 + count; ++g, p += group_bytes) {
        dequantize_group(rhs + g / 4 * layout::kQ4kpBytes * nr, nr, g % 4, p, o);
      }
      row_tiles(c, buf, g0 * 64, 2 * count, n0);
    }
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_f16p1vlx2_q4kp4vlx4_1vlx4vl_sme2_mopa = {
    "matmul_clamp_f32_f16p1vlx2_q4kp4vlx4_1vlx4vl_sme2_mopa",
    Isa::sme2,
    WeightType::q4_k,
    false,
    sme2_q4_gemm_params,
    &lhs_pack_f16pmrx2_f32_neon,
    &rhs_pack_nxk_q4kp_q4k,
    run,
    &matmul_clamp_f32_f16p4x2_q4kp8x4_4x8_scalar};

}  // namespace qmm
