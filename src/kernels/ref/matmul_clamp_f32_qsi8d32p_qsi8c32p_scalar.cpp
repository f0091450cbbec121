#include "kernels/ref/matmul_clamp_f32_qsi8d32p_qsi8c32p_scalar.h"

#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi8c32pscalef16_qsi8c32.h"
#include "kernels/ref/scalar_matmul.h"

namespace qmm {
namespace {

TileParams gemm_params(size_t) { return {4, 8, 4, 1, 4, 8}; }
TileParams gemv_params(size_t) { return {1, 8, 4, 1, 1, 8}; }

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  scalar::matmul_quantized<scalar::Qsi8d32p, scalar::Qsi8c32p>(m, n, k, 4, 8, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  scalar::matmul_quantized<scalar::Qsi8d32p, scalar::Qsi8c32p>(m, n, k, 1, 8, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_qsi8c32p8x4_4x8_scalar = {"matmul_clamp_f32_qsi8d32p4x4_qsi8c32p8x4_4x8_scalar", Isa::scalar, WeightType::q8_0, false, gemm_params,
    &lhs_quant_pack_qsi8d32p_f32, &rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qsi8c32p8x4_1x8_scalar = {"matmul_clamp_f32_qsi8d32p1x4_qsi8c32p8x4_1x8_scalar", Isa::scalar, WeightType::q8_0, true, gemv_params,
    &lhs_quant_pack_qsi8d32p_f32, &rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, gemv};

}  // namespace qmm
