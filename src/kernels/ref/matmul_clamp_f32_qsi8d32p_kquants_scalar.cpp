#include "kernels/ref/matmul_clamp_f32_qsi8d32p_kquants_scalar.h"

#include "kernels/ref/layouts_k.h"
#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/ref/scalar_matmul.h"

namespace qmm {
namespace {

TileParams gemm_params(size_t) { return {4, 8, 4, 2, 4, 8}; }
TileParams gemv_params(size_t) { return {1, 8, 4, 2, 1, 8}; }

// The loop of the header, over the layout accessors (kernels/ref/layouts_k.h).
template <class Rhs, size_t mr>
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t stride,
         float lo, float hi) {
  using Lhs = scalar::Qsi8d32p;
  constexpr size_t nr = 8;
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t i = 0; i < m; ++i) {
    const uint8_t* lp = lhs + i / mr * Lhs::panel_bytes(mr, k);
    float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + i * stride);
    for (size_t j = 0; j < n; ++j) {
      const uint8_t* rp = rhs + j / nr * Rhs::panel_bytes(nr, k);
      float acc = 0.0f;
      for (size_t b = 0; b < k / kBlock; ++b) {
        float blk = 0.0f;
        int32_t asum = 0;
        for (size_t g = b * kBlock / Rhs::kGroup; g < (b + 1) * kBlock / Rhs::kGroup; ++g) {
          int32_t isum = 0;
          for (size_t c = g * Rhs::kGroup; c < (g + 1) * Rhs::kGroup; ++c) {
            const int a = Lhs::value(lp, mr, i % mr, c);
            isum += a * Rhs::value(rp, nr, j % nr, c);
            asum += a;
          }
          blk += static_cast<float>(isum) * Rhs::scale(rp, nr, k, j % nr, g);
        }
        blk -= static_cast<float>(asum) * Rhs::min(rp, nr, k, j % nr, b);
        acc += blk * Lhs::scale(lp, mr, k, i % mr, b);
      }
      out[j] = scalar::clamp(acc, lo, hi);
    }
  }
}

constexpr auto* kLhs = &lhs_quant_pack_qsi8d32p_f32;

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_scalar = {"matmul_clamp_f32_qsi8d32p4x4_q4kp8x4_4x8_scalar", Isa::scalar,
    WeightType::q4_k, false, gemm_params, kLhs, &rhs_pack_nxk_q4kp_q4k, run<layout::Q4kp, 4>};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_scalar = {"matmul_clamp_f32_qsi8d32p1x4_q4kp8x4_1x8_scalar", Isa::scalar,
    WeightType::q4_k, true, gemv_params, kLhs, &rhs_pack_nxk_q4kp_q4k, run<layout::Q4kp, 1>};
const Ukernel matmul_clamp_f32_qsi8d32p4x4_q5kp8x4_4x8_scalar = {"matmul_clamp_f32_qsi8d32p4x4_q5kp8x4_4x8_scalar", Isa::scalar,
    WeightType::q5_k, false, gemm_params, kLhs, &rhs_pack_nxk_q5kp_q5k, run<layout::Q5kp, 4>};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q5kp8x4_1x8_scalar = {"matmul_clamp_f32_qsi8d32p1x4_q5kp8x4_1x8_scalar", Isa::scalar,
    WeightType::q5_k, true, gemv_params, kLhs, &rhs_pack_nxk_q5kp_q5k, run<layout::Q5kp, 1>};
const Ukernel matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_scalar = {"matmul_clamp_f32_qsi8d32p4x4_q6kp8x4_4x8_scalar", Isa::scalar,
    WeightType::q6_k, false, gemm_params, kLhs, &rhs_pack_nxk_q6kp_q6k, run<layout::Q6kp, 4>};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_scalar = {"matmul_clamp_f32_qsi8d32p1x4_q6kp8x4_1x8_scalar", Isa::scalar,
    WeightType::q6_k, true, gemv_params, kLhs, &rhs_pack_nxk_q6kp_q6k, run<layout::Q6kp, 1>};
const Ukernel matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x4_4x8_scalar = {"matmul_clamp_f32_qsi8d32p4x4_iq4nlp8x4_4x8_scalar",
    Isa::scalar, WeightType::iq4_nl, false, gemm_params, kLhs, &rhs_pack_nxk_iq4nlp_iq4nl, run<layout::Iq4nlp, 4>};
const Ukernel matmul_clamp_f32_qsi8d32p1x4_iq4nlp8x4_1x8_scalar = {"matmul_clamp_f32_qsi8d32p1x4_iq4nlp8x4_1x8_scalar",
    Isa::scalar, WeightType::iq4_nl, true, gemv_params, kLhs, &rhs_pack_nxk_iq4nlp_iq4nl, run<layout::Iq4nlp, 1>};

}  // namespace qmm
