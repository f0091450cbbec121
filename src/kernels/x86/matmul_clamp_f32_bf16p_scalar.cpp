#include "kernels/x86/matmul_clamp_f32_bf16p_scalar.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/fp16.h"
#include "kernels/ref/layouts_k.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/lhs_quant_pack_bf16p16x32_f32.h"
#include "kernels/x86/rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0.h"
#include "kernels/x86/rhs_pack_nxk_qau8c32pscalef16_qsi8c32.h"

namespace qmm {
namespace {

constexpr size_t kNr = 16, kMr = 16;

// Weight (row r of a 16-row panel p, element c) in F32, per packed layout (header's table).
struct Q4 {
  static size_t panel_bytes(size_t k) { return kNr * (k / kBlock) * 18; }
  static float weight(const uint8_t* p, size_t r, size_t c) {
    const uint8_t* blk = p + c / kBlock * kNr * 18;
    const size_t j = c % kBlock;
    const uint8_t b = blk[layout::chunk_offset(kNr, r, j % 16)];
    const int q = (j < 16 ? b & 0xf : b >> 4) - 8;
    return fp16_to_fp32(layout::load_u16(blk + 16 * kNr + 2 * r)) * static_cast<float>(q);
  }
};
struct Q8 {
  static size_t panel_bytes(size_t k) { return kNr * (k / kBlock) * 34; }
  static float weight(const uint8_t* p, size_t r, size_t c) {
    const uint8_t* blk = p + c / kBlock * kNr * 34;
    const int q = blk[layout::chunk_offset(kNr, r, c % kBlock)] - 128;
    return fp16_to_fp32(layout::load_u16(blk + 32 * kNr + 2 * r)) * static_cast<float>(q);
  }
};
struct Q4K {
  static size_t panel_bytes(size_t k) { return layout::Q4kp::panel_bytes(kNr, k); }
  static float weight(const uint8_t* p, size_t r, size_t c) {
    const float s = layout::Q4kp::factor(p, kNr, r, c / kBlock, 0), mn = layout::Q4kp::factor(p, kNr, r, c / kBlock, 1);
    return s * static_cast<float>(layout::Q4kp::value(p, kNr, r, c)) - mn;
  }
};
struct Q6K {
  static size_t panel_bytes(size_t k) { return layout::Q6kp::panel_bytes(kNr, k); }
  static float weight(const uint8_t* p, size_t r, size_t c) {
    return layout::Q6kp::scale(p, kNr, 0, r, c / 16) * static_cast<float>(layout::Q6kp::value(p, kNr, r, c));
  }
};
struct Iq4nl {
  static size_t panel_bytes(size_t k) { return layout::Iq4nlp::panel_bytes(kNr, k); }
  static float weight(const uint8_t* p, size_t r, size_t c) {
    return layout::Iq4nlp::scale(p, kNr, 0, r, c / kBlock) * static_cast<float>(layout::Iq4nlp::value(p, kNr, r, c));
  }
};

float* row(float* dst, size_t stride, size_t i) { return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride); }

// Per output column and 32-block: the block's 32 weights rounded to BF16, then every row's
// F32 sum carried on in dst (stored and reloaded exactly), in c order.
template <class W>
void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  const auto* lp = static_cast<const uint8_t*>(lhs);
  const auto* rp = static_cast<const uint8_t*>(rhs);
  for (size_t j = 0; j < n; ++j) {
    const uint8_t* panel = rp + j / kNr * W::panel_bytes(k);
    for (size_t b = 0; b < k / kBlock; ++b) {
      float w[kBlock];
      for (size_t c = 0; c < kBlock; ++c) w[c] = bf16p::f32_from_bf16(bf16p::bf16_from_f32(W::weight(panel, j % kNr, b * kBlock + c)));
      for (size_t i = 0; i < m; ++i) {
        const uint8_t* a = lp + i / kMr * bf16p::panel_bytes(kMr, k) + b * kMr * 64 + 64 * (i % kMr);
        float acc = b == 0 ? 0.0f : row(dst, stride, i)[j];
        for (size_t c = 0; c < kBlock; ++c) acc += bf16p::f32_from_bf16(layout::load_u16(a + 2 * c)) * w[c];
        row(dst, stride, i)[j] = acc;
      }
    }
    for (size_t i = 0; i < m; ++i) row(dst, stride, i)[j] = std::min(std::max(row(dst, stride, i)[j], lo), hi);
  }
}

TileParams q4_params(size_t) { return {kMr, kNr, 4, 2, kMr, kNr}; }
TileParams q8_params(size_t) { return {kMr, kNr, 4, 1, kMr, kNr}; }

}  // namespace

const Ukernel matmul_clamp_f32_bf16p16x32_qau4c32p16x4_16x16_scalar = {
    "matmul_clamp_f32_bf16p16x32_qau4c32p16x4_16x16_scalar", Isa::scalar, WeightType::q4_0, false, q4_params,
    &lhs_quant_pack_bf16p16x32_f32_ref, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemm<Q4>};
const Ukernel matmul_clamp_f32_bf16p16x32_qau8c32p16x4_16x16_scalar = {
    "matmul_clamp_f32_bf16p16x32_qau8c32p16x4_16x16_scalar", Isa::scalar, WeightType::q8_0, false, q8_params,
    &lhs_quant_pack_bf16p16x32_f32_ref, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemm<Q8>};
const Ukernel matmul_clamp_f32_bf16p16x32_q4kp16x4_16x16_scalar = {
    "matmul_clamp_f32_bf16p16x32_q4kp16x4_16x16_scalar", Isa::scalar, WeightType::q4_k, false, q4_params,
    &lhs_quant_pack_bf16p16x32_f32_ref, &rhs_pack_nxk_q4kp_q4k, gemm<Q4K>};
const Ukernel matmul_clamp_f32_bf16p16x32_q6kp16x4_16x16_scalar = {
    "matmul_clamp_f32_bf16p16x32_q6kp16x4_16x16_scalar", Isa::scalar, WeightType::q6_k, false, q4_params,
    &lhs_quant_pack_bf16p16x32_f32_ref, &rhs_pack_nxk_q6kp_q6k, gemm<Q6K>};
const Ukernel matmul_clamp_f32_bf16p16x32_iq4nlp16x4_16x16_scalar = {
    "matmul_clamp_f32_bf16p16x32_iq4nlp16x4_16x16_scalar", Isa::scalar, WeightType::iq4_nl, false, q4_params,
    &lhs_quant_pack_bf16p16x32_f32_ref, &rhs_pack_nxk_iq4nlp_iq4nl, gemm<Iq4nl>};

}  // namespace qmm
