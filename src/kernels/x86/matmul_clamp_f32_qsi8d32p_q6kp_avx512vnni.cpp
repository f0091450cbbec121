#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avx512vnni.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx512_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kblocks.h"

namespace qmm {
namespace {

using V = avx512::Zmm;
using K = x86q::Kernels<V, x86q::VnniQ6K<V>, 8, 1, x86q::VnniQ6K<V, false>>;

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p8x4_q6kp16x4_8x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p8x4_q6kp16x4_8x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q6_k, false,
    K::gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, K::gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp16x4_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_q6kp16x4_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q6_k, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, K::gemv};

}  // namespace qmm
