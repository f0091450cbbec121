#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q4kp_avx512vnni.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx512_kgemv.h"
#include "kernels/x86/avx512_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm {
namespace {

using V = avx512::Zmm;
using Block = x86q::VnniQ4K<V>;  // the GEMM's; the GEMVs step by GemvQ4K (x86_kgemv.h)

TileParams gemm_params(size_t) { return {8, V::kLanes, 4, 2, 8, V::kLanes}; }
TileParams gemv_params(size_t) { return {1, V::kLanes, 4, 2, 1, V::kLanes}; }

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  x86q::gemm<V, Block, 8, 1>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<V, x86q::GemvQ4K<V>>(n, k, lhs, rhs, dst, lo, hi);
}

// The GEMV with its stream prefetched into L1 (the tuner's other kind).
void gemv_l1(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<V, x86q::GemvQ4K<V, _MM_HINT_T0>>(n, k, lhs, rhs, dst, lo, hi);
}

// The GEMV over ymm, reading the same 16-column panels (avx512_util.h's Ymm16).
void gemv_ymm(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo,
              float hi) {
  x86q::gemv<avx512::Ymm16, x86q::GemvQ4K<avx512::Ymm16>>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p8x4_q4kp16x4_8x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p8x4_q4kp16x4_8x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q4_k, false,
    gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q4_k, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemv};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusdl1 = {
    "matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusdl1", Isa::avx512vnni, WeightType::q4_k, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemv_l1};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusdymm = {
    "matmul_clamp_f32_qsi8d32p1x4_q4kp16x4_1x16_avx512vnni_dpbusdymm", Isa::avx512vnni, WeightType::q4_k, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemv_ymm};

}  // namespace qmm
