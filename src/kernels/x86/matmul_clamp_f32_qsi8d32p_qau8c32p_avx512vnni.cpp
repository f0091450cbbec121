#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau8c32p_avx512vnni.h"

#include "kernels/x86/avx512_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/rhs_pack_nxk_qau8c32pscalef16_qsi8c32.h"
#include "kernels/x86/x86_qloops.h"

namespace qmm {
namespace {

constexpr size_t kPanelCols = 16;

TileParams gemm_params(size_t) { return {8, kPanelCols, 4, 1, 8, kPanelCols}; }
TileParams gemv_params(size_t) { return {1, kPanelCols, 4, 1, 1, kPanelCols}; }

// The block dot product and the tile loops are x86_qloops.h's, over zmm.
using V = avx512::Zmm;
using Block = x86q::VnniQ8<V>;
static_assert(V::kLanes == kPanelCols);

void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  x86q::gemm<V, Block, 8>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

// The GEMM whose few-row streams (m <= 4: batched decode) are prefetched into L1, as gemv_l1's:
// the GEMM of 2-4 rows where the tuner chose gemv_l1 (Ukernel::few_rows). The same bits.
void gemm_l1(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
             float hi) {
  x86q::gemm<V, Block, 8, 1, Block, _MM_HINT_T0>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

void gemv(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<V, Block>(n, k, lhs, rhs, dst, lo, hi);
}

// The GEMV with its stream prefetched into L1 (x86_qloops.h's kGemvHint: the tuner's other kind).
void gemv_l1(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo, float hi) {
  x86q::gemv<V, Block, x86q::kGemvAhead<V>, x86q::kGemvPanels, _MM_HINT_T0>(n, k, lhs, rhs, dst, lo, hi);
}

// The GEMV over ymm, reading the same 16-column panels (avx512_util.h's Ymm16).
void gemv_ymm(size_t, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t, float lo,
              float hi) {
  x86q::gemv<avx512::Ymm16, x86q::VnniQ8<avx512::Ymm16>>(n, k, lhs, rhs, dst, lo, hi);
}

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p8x4_qau8c32p16x4_8x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p8x4_qau8c32p16x4_8x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q8_0, false,
    gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemm};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::q8_0, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemv};
const Ukernel matmul_clamp_f32_qsi8d32p8x4_qau8c32p16x4_8x16_avx512vnni_dpbusdl1 = {
    "matmul_clamp_f32_qsi8d32p8x4_qau8c32p16x4_8x16_avx512vnni_dpbusdl1", Isa::avx512vnni, WeightType::q8_0, false,
    gemm_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemm_l1};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusdl1 = {
    "matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusdl1", Isa::avx512vnni, WeightType::q8_0, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemv_l1,
    nullptr, &matmul_clamp_f32_qsi8d32p8x4_qau8c32p16x4_8x16_avx512vnni_dpbusdl1};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusdymm = {
    "matmul_clamp_f32_qsi8d32p1x4_qau8c32p16x4_1x16_avx512vnni_dpbusdymm", Isa::avx512vnni, WeightType::q8_0, true,
    gemv_params, &lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemv_ymm};

}  // namespace qmm
