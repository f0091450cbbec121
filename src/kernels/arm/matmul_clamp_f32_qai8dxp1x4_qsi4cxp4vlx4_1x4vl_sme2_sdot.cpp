#include "kernels/arm/matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot.h"

#include "kernels/arm/sme2_channel.h"
#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

// The four int8 vectors (4·VL rows × 4 K) of the chunk at `q`: nr·2 bytes, LUTI4 of each vector.
__attribute__((always_inline)) inline svint8x4_t chunk(const uint8_t* q) __arm_streaming __arm_preserves("za")
    __arm_in("zt0") {
  const svuint8x2_t idx = svld1_u8_x2(svptrue_c8(), q);
  const svint8x2_t lo = svluti4_lane_zt_s8_x2(0, svget2(idx, 0), 0);
  const svint8x2_t hi = svluti4_lane_zt_s8_x2(0, svget2(idx, 1), 0);
  return svcreate4(svget2(lo, 0), svget2(lo, 1), svget2(hi, 0), svget2(hi, 1));
}

__attribute__((always_inline)) inline void gemv(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                const void* rhs_packed, float* dst, size_t stride, float lo,
                                                float hi) __arm_streaming __arm_inout("za") __arm_in("zt0") {
  const size_t nr = 4 * svcntw(), kp = sme2ch::kpad(k);
  const size_t lhs_row = kp + 8, rhs_data = nr * kp / 2, rhs_panel = rhs_data + nr * 12;
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
      for (size_t c = 0; c < kp; c += 16) {
        const svint8_t a = svld1rq_s8(svptrue_b8(), reinterpret_cast<const int8_t*>(lhs + c));
        const uint8_t* w = rhs + c / 2 * nr;  // chunk c/4: nr·2 bytes each
        svdot_lane_za32_s8_vg1x4(0, chunk(w), a, 0);
        svdot_lane_za32_s8_vg1x4(0, chunk(w + nr * 2), a, 1);
        svdot_lane_za32_s8_vg1x4(0, chunk(w + nr * 4), a, 2);
        svdot_lane_za32_s8_vg1x4(0, chunk(w + nr * 6), a, 3);
      }
      sme2ch::store_row<true>(svread_za32_s32_vg1x4(0), rhs + rhs_data, nr, neg_zp, s_lhs, cols,
                              sme2ch::row_ptr(dst, stride, i) + n0, vlo, vhi);
    }
  }
}

__arm_new("za", "zt0") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs,
                                                         float* dst, size_t stride, float lo, float hi) {
  static const int32_t lut[16] = {0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1};  // signed int4
  svldr_zt(0, lut);
  gemv(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot = {
    "matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot", Isa::sme2, WeightType::qc4, true,
    sme2_qc4_kai_gemv_params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, run};

}  // namespace qmm
