#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avx512vnni.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx512_kgemv.h"
#include "kernels/x86/avx512_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kblocks.h"

namespace qmm {
namespace {

using V = avx512::Zmm;
// The GEMV steps by GemvQ6K (x86_kgemv.h, zero points by vpdpbusd zmm: avx512_kgemv.h), the
// GEMM tiles by VnniQ6K.
using Gemv = x86q::GemvQ6K<V, x86q::Q6KZeroPointsZmm>;
using K = x86q::Kernels<V, Gemv, 8, 1, x86q::VnniQ6K<V, false>, x86q::VnniQ6K<V>>;  // few rows: spread prefetch

// The GEMV over ymm, reading the same 16-column panels (avx512_util.h's Ymm16).
void gemv_ymm(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo,
              float hi) {
  x86q::gemv<avx512::Ymm16, x86q::GemvQ6K<avx512::Ymm16, x86q::Q6KZeroPointsZmm>>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p8x4_q6kp16x4_8x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p8x4_q6kp16x4_8x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q6_k, false,
    K::gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, K::gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp16x4_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_q6kp16x4_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q6_k, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, K::gemv};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp16x4_1x16_avx512vnni_dpbusdymm = {
    "matmul_clamp_f32_qsi8d32p1x4_q6kp16x4_1x16_avx512vnni_dpbusdymm", Isa::avx512vnni, WeightType::q6_k, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, gemv_ymm};

}  // namespace qmm
