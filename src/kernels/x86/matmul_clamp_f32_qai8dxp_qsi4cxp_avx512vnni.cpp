#include "kernels/x86/matmul_clamp_f32_qai8dxp_qsi4cxp_avx512vnni.h"

#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.h"
#include "kernels/x86/avx512_channel_tiles.h"

namespace qmm {
namespace {

struct W4 {
  // 32 bytes, element e in byte e/2 (low nibble for even e) -> 64 sign-extended int8 in order.
  static __m512i load(const uint8_t* panel, size_t kk) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 8));
    const __m256i mask = _mm256_set1_epi8(0x0f);
    const __m256i lo = _mm256_and_si256(b, mask), hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), mask);
    const __m256i e0 = _mm256_unpacklo_epi8(lo, hi), e1 = _mm256_unpackhi_epi8(lo, hi);  // per 128-bit lane
    const __m256i first = _mm256_permute2x128_si256(e0, e1, 0x20), second = _mm256_permute2x128_si256(e0, e1, 0x31);
    const __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(first), second, 1);
    const __m512i e8 = _mm512_set1_epi8(8);
    return _mm512_sub_epi8(_mm512_xor_si512(u, e8), e8);  // nibble n -> (n ^ 8) - 8: -8..7
  }
  static size_t data_bytes(size_t nr, size_t k) { return layout::qsi4cxp_data_bytes(nr, k); }
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi4cxp_panel_bytes(nr, k); }
};

TileParams gemm_params(size_t) { return {8, 16, 4, 1, 8, 16}; }
TileParams gemv_params(size_t) { return {1, 16, 4, 1, 1, 16}; }

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp8x4_qsi4cxp16x4_8x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp8x4_qsi4cxp16x4_8x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::qc4, false,
    gemm_params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, avx512ch::run<W4, 8>};
const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi4cxp16x4_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp1x4_qsi4cxp16x4_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::qc4, true,
    gemv_params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, avx512ch::run<W4, 1>};

}  // namespace qmm
