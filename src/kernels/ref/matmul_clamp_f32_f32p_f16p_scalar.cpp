#include "kernels/ref/matmul_clamp_f32_f32p_f16p_scalar.h"

#include "kernels/ref/pack_float_panels.h"
#include "kernels/ref/scalar_matmul.h"

namespace qmm {
namespace {

TileParams gemm_params(size_t) { return {4, 8, 1, 1, 4, 8}; }
TileParams gemv_params(size_t) { return {1, 8, 1, 1, 1, 8}; }

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  scalar::matmul_float<scalar::F16p>(m, n, k, 4, 8, 1, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  scalar::matmul_float<scalar::F16p>(m, n, k, 1, 8, 1, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_f32p4x1_f16p8x1_4x8_scalar = {"matmul_clamp_f32_f32p4x1_f16p8x1_4x8_scalar", Isa::scalar, WeightType::f16, false, gemm_params,
    &lhs_pack_f32p_f32, &rhs_pack_nxk_f16p_f16, gemm};
const Ukernel matmul_clamp_f32_f32p1x1_f16p8x1_1x8_scalar = {"matmul_clamp_f32_f32p1x1_f16p8x1_1x8_scalar", Isa::scalar, WeightType::f16, true, gemv_params,
    &lhs_pack_f32p_f32, &rhs_pack_nxk_f16p_f16, gemv};

}  // namespace qmm
