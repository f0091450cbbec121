#include "kernels/arm/matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa.h"

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

__attribute__((always_inline)) inline void gemm(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                const void* rhs_packed, float* dst, size_t stride, float lo,
                                                float hi) __arm_streaming __arm_inout("za") __arm_in("zt0") {
  const size_t vl = svcntw(), nr = 4 * vl, kp = sme2ch::kpad(k);
  const size_t lhs_panel = vl * (kp + 8), rhs_data = nr * kp / 2, rhs_panel = rhs_data + nr * 12;
  const svfloat32_t vlo = svdup_f32(lo), vhi = svdup_f32(hi);
  const svcount_t all = svptrue_c8();
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += nr, rhs += rhs_panel) {
    const svcount_t cols = svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(n), 4);
    const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
    for (size_t m0 = 0; m0 < m; m0 += vl, lhs += lhs_panel) {
      svzero_za();
      for (size_t c = 0; c < kp; c += 16) {
        const svint8x4_t a = svld1_s8_x4(all, reinterpret_cast<const int8_t*>(lhs + c * vl));
        const uint8_t* w = rhs + c / 2 * nr;  // chunk c/4: nr·2 bytes each
        sme2ch::mopa4(svget4(a, 0), chunk(w));
        sme2ch::mopa4(svget4(a, 1), chunk(w + nr * 2));
        sme2ch::mopa4(svget4(a, 2), chunk(w + nr * 4));
        sme2ch::mopa4(svget4(a, 3), chunk(w + nr * 6));
      }
      const auto* neg_zp = reinterpret_cast<const int32_t*>(lhs + vl * kp);
      const auto* s_lhs = reinterpret_cast<const float*>(lhs + vl * (kp + 4));
      const size_t rows = m - m0 < vl ? m - m0 : vl;
      float* out = sme2ch::row_ptr(dst, stride, m0) + n0;
      for (size_t i = 0; i < rows; ++i) {
        // Row i of ZA0.S..ZA3.S: ZA0.B slices 4i..4i+3 (one MOVA ×4).
        const svint8x4_t za = svread_hor_za8_s8_vg4(0, static_cast<uint32_t>(4 * i));
        const svint32x4_t acc = svcreate4(svreinterpret_s32(svget4(za, 0)), svreinterpret_s32(svget4(za, 1)),
                                          svreinterpret_s32(svget4(za, 2)), svreinterpret_s32(svget4(za, 3)));
        sme2ch::store_row<false>(acc, rhs + rhs_data, nr, neg_zp[i], s_lhs[i], cols, sme2ch::row_ptr(out, stride, i),
                                 vlo, vhi);
      }
    }
  }
}

__arm_new("za", "zt0") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs,
                                                         float* dst, size_t stride, float lo, float hi) {
  static const int32_t lut[16] = {0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1};  // signed int4
  svldr_zt(0, lut);
  gemm(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa = {
    "matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa", Isa::sme2, WeightType::qc4, false,
    sme2_qc4_kai_gemm_params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, run};

}  // namespace qmm
