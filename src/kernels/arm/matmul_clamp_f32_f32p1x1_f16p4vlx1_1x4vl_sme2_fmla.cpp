#include "kernels/arm/matmul_clamp_f32_f32p1x1_f16p4vlx1_1x4vl_sme2_fmla.h"

#include <arm_sme.h>

#include "kernels/arm/sme2_clamp.h"
#include "kernels/ref/pack_float_panels.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

// The 4·VL weights of column c as F32: even columns (FCVT), odd columns (FCVTLT) per half.
__attribute__((always_inline)) inline svfloat32x4_t weights(const float16_t* w) __arm_streaming {
  const svbool_t all = svptrue_b32();
  const svfloat16x2_t h = svld1_f16_x2(svptrue_c16(), w);
  return svcreate4(svcvt_f32_f16_x(all, svget2(h, 0)), svcvtlt_f32_f16_x(all, svget2(h, 0)),
                   svcvt_f32_f16_x(all, svget2(h, 1)), svcvtlt_f32_f16_x(all, svget2(h, 1)));
}

__arm_new("za") __arm_locally_streaming void run(size_t m, size_t n, size_t k, const void* lhs_packed,
                                                  const void* rhs_packed, float* dst, size_t stride, float lo,
                                                  float hi) {
  const size_t nr = 4 * svcntw();
  const svbool_t all = svptrue_b32();
  const svfloat32_t zero = svdup_f32(0.0f), vlo = svdup_f32(lo), vhi = svdup_f32(hi);
  for (size_t i = 0; i < m; ++i) {
    const float* lhs = static_cast<const float*>(lhs_packed) + i * k;
    const auto* rhs = static_cast<const float16_t*>(rhs_packed);
    for (size_t n0 = 0; n0 < n; n0 += nr, rhs += nr * k) {
      svwrite_za32_f32_vg1x4(0, svcreate4(zero, zero, zero, zero));
      size_t c = 0;
      for (; c + 4 <= k; c += 4) {
        const svfloat32_t a = svld1rq_f32(all, lhs + c);
        svmla_lane_za32_f32_vg1x4(0, weights(rhs + c * nr), a, 0);
        svmla_lane_za32_f32_vg1x4(0, weights(rhs + (c + 1) * nr), a, 1);
        svmla_lane_za32_f32_vg1x4(0, weights(rhs + (c + 2) * nr), a, 2);
        svmla_lane_za32_f32_vg1x4(0, weights(rhs + (c + 3) * nr), a, 3);
      }
      for (; c < k; ++c) svmla_single_za32_f32_vg1x4(0, weights(rhs + c * nr), svdup_f32(lhs[c]));
      const svfloat32x4_t t = svread_za32_f32_vg1x4(0);
      const svfloat32x2_t lo2 = svzip_f32_x2(svcreate2(svget4(t, 0), svget4(t, 1)));
      const svfloat32x2_t hi2 = svzip_f32_x2(svcreate2(svget4(t, 2), svget4(t, 3)));
      const svfloat32x4_t acc = svcreate4(svget2(lo2, 0), svget2(lo2, 1), svget2(hi2, 0), svget2(hi2, 1));
      float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride) + n0;
      svst1_f32_x4(svwhilelt_c32(static_cast<uint64_t>(n0), static_cast<uint64_t>(n), 4), out,
                   sme2::clamp_x4(acc, vlo, vhi));
    }
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_f32p1x1_f16p4vlx1_1x4vl_sme2_fmla = {
    "matmul_clamp_f32_f32p1x1_f16p4vlx1_1x4vl_sme2_fmla", Isa::sme2, WeightType::f16, true, sme2_f16_gemv_params,
    &lhs_pack_f32p_f32, &rhs_pack_nxk_f16p_f16, run};

}  // namespace qmm
