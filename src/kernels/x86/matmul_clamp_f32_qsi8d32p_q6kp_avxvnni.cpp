#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avxvnni.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avxvnni_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kblocks.h"
#include "kernels/x86/x86_kgemv.h"

namespace qmm {
namespace {

using V = avxvnni::Ymm;
// The GEMV steps by GemvQ6K (x86_kgemv.h), the GEMM tiles by VnniQ6K.
using K = x86q::Kernels<V, x86q::GemvQ6K<V>, 4, 1, x86q::VnniQ6K<V, false>, x86q::VnniQ6K<V>>;  // few rows: spread prefetch

void gemv_near(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<V, x86q::GemvQ6K<V>, x86q::kGemvNear>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q6_k, false,
    K::gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, K::gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q6_k, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, K::gemv};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avxvnni_dpbusdnear = {
    "matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avxvnni_dpbusdnear", Isa::avxvnni, WeightType::q6_k, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, gemv_near};

}  // namespace qmm
