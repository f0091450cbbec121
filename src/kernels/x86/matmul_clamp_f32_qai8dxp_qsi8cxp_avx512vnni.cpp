#include "kernels/x86/matmul_clamp_f32_qai8dxp_qsi8cxp_avx512vnni.h"

#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi8cxp_qsi8cx.h"
#include "kernels/x86/avx512_channel_tiles.h"

namespace qmm {
namespace {

struct W8 {
  static __m512i load(const uint8_t* panel, size_t kk) { return _mm512_loadu_si512(panel + kk * 16); }
  static size_t data_bytes(size_t nr, size_t k) { return layout::qsi8cxp_data_bytes(nr, k); }
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi8cxp_panel_bytes(nr, k); }
};

TileParams gemm_params(size_t) { return {8, 16, 4, 1, 8, 16}; }
TileParams gemv_params(size_t) { return {1, 16, 4, 1, 1, 16}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp8x4_qsi8cxp16x4_8x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp8x4_qsi8cxp16x4_8x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::qc8, false,
    gemm_params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi8cxp_qsi8cx, avx512ch::run<W8, 8>};
const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi8cxp16x4_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp1x4_qsi8cxp16x4_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::qc8, true,
    gemv_params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi8cxp_qsi8cx, avx512ch::run<W8, 1>};

}  // namespace qmm
