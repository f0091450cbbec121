#include "kernels/x86/matmul_clamp_f32_f32p_f16p_avx512.h"

#include "kernels/ref/pack_float_panels.h"
#include "kernels/x86/avx512_float_tiles.h"

namespace qmm {
namespace {

TileParams gemm_params(size_t) { return {12, avx512::kFloatNr, 1, 1, 12, avx512::kFloatNr}; }
TileParams gemv_params(size_t) { return {1, avx512::kFloatNr, 1, 1, 1, avx512::kFloatNr}; }

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  avx512::float_gemm<avx512::WeightsF16, 12>(m, n, k, lhs, rhs, 2, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  avx512::float_gemv<avx512::WeightsF16>(n, k, static_cast<const float*>(lhs), rhs, 2, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_f32p12x1_f16p16x1_12x16_avx512_fma = {
    "matmul_clamp_f32_f32p12x1_f16p16x1_12x16_avx512_fma", Isa::avx512vnni, WeightType::f16, false, gemm_params,
    &lhs_pack_f32p_f32, &rhs_pack_nxk_f16p_f16, gemm};
const Ukernel matmul_clamp_f32_f32p1x1_f16p16x1_1x16_avx512_fma = {
    "matmul_clamp_f32_f32p1x1_f16p16x1_1x16_avx512_fma", Isa::avx512vnni, WeightType::f16, true, gemv_params,
    &lhs_pack_f32p_f32, &rhs_pack_nxk_f16p_f16, gemv};

}  // namespace qmm
