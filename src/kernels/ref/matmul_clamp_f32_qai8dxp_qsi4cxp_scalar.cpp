#include "kernels/ref/matmul_clamp_f32_qai8dxp_qsi4cxp_scalar.h"

#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.h"
#include "kernels/ref/scalar_channel.h"

namespace qmm {
namespace {

TileParams gemm_params(size_t) { return {4, 8, 4, 1, 4, 8}; }
TileParams gemv_params(size_t) { return {1, 8, 4, 1, 1, 8}; }

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  scalar::matmul_channel<scalar::Qsi4cxp>(m, n, k, 4, 8, 4, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  scalar::matmul_channel<scalar::Qsi4cxp>(m, n, k, 1, 8, 4, lhs, rhs, dst, stride, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp4x4_qsi4cxp8x4_4x8_scalar = {"matmul_clamp_f32_qai8dxp4x4_qsi4cxp8x4_4x8_scalar", Isa::scalar, WeightType::qc4, false, gemm_params,
    &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, gemm};
const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi4cxp8x4_1x8_scalar = {"matmul_clamp_f32_qai8dxp1x4_qsi4cxp8x4_1x8_scalar", Isa::scalar, WeightType::qc4, true, gemv_params,
    &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, gemv};

}  // namespace qmm
