#include "kernels/x86/matmul_clamp_f32_qsi8d32p_iq4nlp_avx512vnni.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx512_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kblocks.h"

namespace qmm {
namespace {

using V = avx512::Zmm;
using K = x86q::Kernels<V, x86q::VnniIq4nl<V>, 8, 1>;

// The GEMV over ymm, reading the same 16-column panels (avx512_util.h's Ymm16).
void gemv_ymm(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo,
              float hi) {
  x86q::gemv<avx512::Ymm16, x86q::VnniIq4nl<avx512::Ymm16>>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p8x4_iq4nlp16x4_8x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p8x4_iq4nlp16x4_8x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::iq4_nl, false,
    K::gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_iq4nlp_iq4nl, K::gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::iq4_nl, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_iq4nlp_iq4nl, K::gemv};
const Ukernel matmul_clamp_f32_qsi8d32p8x4_iq4nlp16x4_8x16_avx512vnni_dpbusdl1 = {
    "matmul_clamp_f32_qsi8d32p8x4_iq4nlp16x4_8x16_avx512vnni_dpbusdl1", Isa::avx512vnni, WeightType::iq4_nl, false,
    K::gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_iq4nlp_iq4nl, K::gemm_l1};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusdl1 = {
    "matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusdl1", Isa::avx512vnni, WeightType::iq4_nl, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_iq4nlp_iq4nl, K::gemv_l1,
    nullptr, &matmul_clamp_f32_qsi8d32p8x4_iq4nlp16x4_8x16_avx512vnni_dpbusdl1};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusdymm = {
    "matmul_clamp_f32_qsi8d32p1x4_iq4nlp16x4_1x16_avx512vnni_dpbusdymm", Isa::avx512vnni, WeightType::iq4_nl, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_iq4nlp_iq4nl, gemv_ymm};

}  // namespace qmm
