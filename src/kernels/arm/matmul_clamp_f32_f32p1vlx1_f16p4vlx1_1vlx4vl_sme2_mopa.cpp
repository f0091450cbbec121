#include "kernels/arm/matmul_clamp_f32_f32p1vlx1_f16p4vlx1_1vlx4vl_sme2_mopa.h"

#include <arm_sme.h>

#include "kernels/arm/sme2_clamp.h"
#include "kernels/ref/pack_float_panels.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

__arm_new("za") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                  const void* rhs_packed, float* dst, size_t stride, float lo,
                                                  float hi) {
  const size_t vl = svcntw(), nr = 4 * vl;
  const svbool_t all = svptrue_b32();
  const svfloat32_t vlo = svdup_f32(lo), vhi = svdup_f32(hi);
  const auto* rhs = static_cast<const float16_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += nr, rhs += nr * k) {
    const svcount_t cols = svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(n), 4);
    const auto* lhs = static_cast<const float*>(lhs_packed);
    for (size_t m0 = 0; m0 < m; m0 += vl, lhs += vl * k) {
      svzero_za();
#pragma clang loop unroll_count(4)
      for (size_t c = 0; c < k; ++c) {
        const svfloat32_t a = svld1_f32(all, lhs + c * vl);
        const svfloat16x2_t h = svld1_f16_x2(svptrue_c16(), rhs + c * nr);
        svmopa_za32_f32_m(0, all, all, a, svcvt_f32_f16_x(all, svget2(h, 0)));
        svmopa_za32_f32_m(1, all, all, a, svcvtlt_f32_f16_x(all, svget2(h, 0)));
        svmopa_za32_f32_m(2, all, all, a, svcvt_f32_f16_x(all, svget2(h, 1)));
        svmopa_za32_f32_m(3, all, all, a, svcvtlt_f32_f16_x(all, svget2(h, 1)));
      }
      const size_t rows = m - m0 < vl ? m - m0 : vl;
      for (size_t i = 0; i < rows; ++i) {
        // Row i of the four tiles (ZA array rows 4i..4i+3), columns back in order by ZIP.
        const svint8x4_t za = svread_hor_za8_s8_vg4(0, static_cast<uint32_t>(4 * i));
        const svfloat32x2_t lo2 =
            svzip_f32_x2(svcreate2(svreinterpret_f32(svget4(za, 0)), svreinterpret_f32(svget4(za, 1))));
        const svfloat32x2_t hi2 =
            svzip_f32_x2(svcreate2(svreinterpret_f32(svget4(za, 2)), svreinterpret_f32(svget4(za, 3))));
        const svfloat32x4_t acc = svcreate4(svget2(lo2, 0), svget2(lo2, 1), svget2(hi2, 0), svget2(hi2, 1));
        float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + (m0 + i) * stride) + n0;
        svst1_f32_x4(cols, out, sme2::clamp_x4(acc, vlo, vhi));
      }
    }
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_f32p1vlx1_f16p4vlx1_1vlx4vl_sme2_mopa = {
    "matmul_clamp_f32_f32p1vlx1_f16p4vlx1_1vlx4vl_sme2_mopa", Isa::sme2, WeightType::f16, false, sme2_f16_gemm_params,
    &lhs_pack_f32p_f32, &rhs_pack_nxk_f16p_f16, run};

}  // namespace qmm
