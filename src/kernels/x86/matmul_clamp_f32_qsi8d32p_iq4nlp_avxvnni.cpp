#include "kernels/x86/matmul_clamp_f32_qsi8d32p_iq4nlp_avxvnni.h"

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avxvnni_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/x86_kblocks.h"

namespace qmm {
namespace {

using V = avxvnni::Ymm;
using K = x86q::Kernels<V, x86q::VnniIq4nl<V>, 4>;

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x4_4x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x4_4x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::iq4_nl, false,
    K::gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_iq4nlp_iq4nl, K::gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp8x4_1x8_avxvnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_iq4nlp8x4_1x8_avxvnni_dpbusd", Isa::avxvnni, WeightType::iq4_nl, true,
    K::gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_iq4nlp_iq4nl, K::gemv};

}  // namespace qmm
