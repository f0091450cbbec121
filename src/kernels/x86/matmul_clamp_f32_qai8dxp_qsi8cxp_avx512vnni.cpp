#include "kernels/x86/matmul_clamp_f32_qai8dxp_qsi8cxp_avx512vnni.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/ref/layouts_c.h"
#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi8cxp_qsi8cx.h"

namespace qmm {
namespace {

constexpr size_t kNr = 16, kKr = 4;

TileParams gemm_params(size_t) { return {4, kNr, kKr, 1, 4, kNr}; }
TileParams gemv_params(size_t) { return {1, kNr, kKr, 1, 1, kNr}; }

int32_t load_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Rows 0..MR-1 of one LHS panel (m valid) x one 16-column RHS panel (n valid).
template <size_t MR>
void tile(size_t m, size_t n, size_t k, const uint8_t* lp, const uint8_t* rp, float* dst, size_t stride, __m512 vlo,
          __m512 vhi) {
  const size_t kp = layout::kc_padded(k);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i acc[MR];
  for (size_t r = 0; r < MR; ++r) acc[r] = _mm512_setzero_si512();
  for (size_t c = 0; c < kp; c += kKr) {
    const __m512i w = _mm512_loadu_si512(rp + c * kNr);
    const uint8_t* a = lp + c * MR;
    for (size_t r = 0; r < MR; ++r) {
      const __m512i av = _mm512_xor_si512(_mm512_set1_epi32(load_i32(a + r * kKr)), flip);
      acc[r] = _mm512_dpbusd_epi32(acc[r], av, w);
    }
  }
  const uint8_t* tail = rp + layout::qsi8cxp_data_bytes(kNr, k);
  const __m512i sums = _mm512_loadu_si512(tail);
  const __m512 sw = _mm512_loadu_ps(tail + kNr * 4), bias = _mm512_loadu_ps(tail + 2 * kNr * 4);
  const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
  for (size_t r = 0; r < MR && r < m; ++r) {
    const int32_t zp_fold = layout::qai8dxp_neg_zero_point(lp, MR, k, r) - 128;
    const __m512i isum = _mm512_add_epi32(acc[r], _mm512_mullo_epi32(sums, _mm512_set1_epi32(zp_fold)));
    const __m512 s = _mm512_mul_ps(_mm512_set1_ps(layout::qai8dxp_scale(lp, MR, k, r)), sw);
    const __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(isum), s), bias);
    _mm512_mask_storeu_ps(reinterpret_cast<uint8_t*>(dst) + r * stride, mask, _mm512_min_ps(vhi, _mm512_max_ps(vlo, v)));
  }
}

template <size_t MR>
void run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const size_t lpanel = layout::qai8dxp_panel_bytes(MR, k), rpanel = layout::qsi8cxp_panel_bytes(kNr, k);
  for (size_t i = 0; i < m; i += MR) {
    const auto* lp = static_cast<const uint8_t*>(lhs) + i / MR * lpanel;
    for (size_t j = 0; j < n; j += kNr) {
      const auto* rp = static_cast<const uint8_t*>(rhs) + j / kNr * rpanel;
      float* d = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride) + j;
      tile<MR>(m - i, std::min(kNr, n - j), k, lp, rp, d, stride, vlo, vhi);
    }
  }
}

}  // namespace

const Ukernel matmul_clamp_f32_qai8dxp4x4_qsi8cxp16x4_4x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp4x4_qsi8cxp16x4_4x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::qc8, false,
    gemm_params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi8cxp_qsi8cx, run<4>};
const Ukernel matmul_clamp_f32_qai8dxp1x4_qsi8cxp16x4_1x16_avx512vnni_dpbusd = {
    "matmul_clamp_f32_qai8dxp1x4_qsi8cxp16x4_1x16_avx512vnni_dpbusd", Isa::avx512vnni, WeightType::qc8, true,
    gemv_params, &lhs_quant_pack_qai8dxp_f32, &rhs_pack_nxk_qsi8cxp_qsi8cx, run<1>};

}  // namespace qmm
