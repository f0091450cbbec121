#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avxvnni.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avxvnni_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kblocks.h"

namespace qmm {
namespace {

using V = avxvnni::Ymm;
using K = x86q::Kernels<V, x86q::VnniQ6K<V>, 4, 1, x86q::VnniQ6K<V, false>>;

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q6_k, false,
    K::gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, K::gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::q6_k, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_q6kp_q6k, K::gemv};

}  // namespace qmm
