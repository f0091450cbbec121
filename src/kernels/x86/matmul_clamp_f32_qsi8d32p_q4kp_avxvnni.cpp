#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q4kp_avxvnni.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avxvnni_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kgemv.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm {
namespace {

using V = avxvnni::Ymm;
using Block = x86q::VnniQ4K<V>;  // the GEMM's; the GEMV steps by GemvQ4K (x86_kgemv.h)

TileParams gemm_params(size_t) { return {4, V::kLanes, 4, 2, 4, V::kLanes}; }
TileParams gemv_params(size_t) { return {1, V::kLanes, 4, 2, 1, V::kLanes}; }

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  x86q::gemm<V, Block, 4, 2>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<V, x86q::GemvQ4K<V>>(n, k, lhs, rhs, dst, lo, hi);
}

void gemv_near(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<V, x86q::GemvQ4K<V>, x86q::kGemvNear, 8>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q4_k, false,
    gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q4_k, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemv};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avxvnni_dpbusdnear = {
    "matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_avxvnni_dpbusdnear", Isa::avxvnni, WeightType::q4_k, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemv_near};

}  // namespace qmm
