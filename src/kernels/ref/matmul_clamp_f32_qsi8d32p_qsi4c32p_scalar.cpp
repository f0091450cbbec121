#include "kernels/ref/matmul_clamp_f32_qsi8d32p_qsi4c32p_scalar.h"

#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0.h"
#include "kernels/ref/scalar_matmul.h"

namespace qmm {
namespace {

TileParams gemm_params(size_t) { return {4, 8, 4, 2, 4, 8}; }
TileParams gemv_params(size_t) { return {1, 8, 4, 2, 1, 8}; }

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  scalar::matmul_quantized<scalar::Qsi8d32p, scalar::Qsi4c32ps1s0>(m, n, k, 4, 8, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  scalar::matmul_quantized<scalar::Qsi8d32p, scalar::Qsi4c32ps1s0>(m, n, k, 1, 8, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_qsi4c32p8x4_4x8_scalar = {"matmul_clamp_f32_qsi8d32p4x4_qsi4c32p8x4_4x8_scalar", Isa::scalar, WeightType::q4_0, false, gemm_params,
    &lhs_quant_pack_qsi8d32p_f32, &rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4s2_qsi4c32p8x4s2_1x8_scalar = {"matmul_clamp_f32_qsi8d32p1x4s2_qsi4c32p8x4s2_1x8_scalar", Isa::scalar, WeightType::q4_0, true, gemv_params,
    &lhs_quant_pack_qsi8d32p_f32, &rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0, gemv};

}  // namespace qmm
