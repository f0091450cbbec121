// The F16-activation Q4_0 kernels (LHS packer lhs_pack_f16pmrx2_f32: the scalar
// matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar everywhere, the SME2 FMOPA GEMM of KleidiAI's
// name where it runs) against oracles of their own, since the int8 scalar Q4_0 GEMM is none
// (its activation rounding errs more):
//  - the F32 product of the F16 values they read (activations rounded to F16, weights d·(q − 8)
//    rounded to F16), summed in double: within F32 summation order, k·2^-22·S;
//  - the unrounded product (F32 activations, dequantized weights): within 2e-3·S (two F16
//    roundings, 2^-11 relative each), S = Σ|a|·|w|;
//  - an activation F16 cannot hold (|x| ≥ 65520) makes its whole output row NaN, like a
//    non-finite one (the packer's rule; the list-wide NaN policy test covers NaN and ±Inf).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/buffer.h"
#include "core/fp16.h"
#include "test_util.h"

namespace qmm {
namespace {

std::vector<const Ukernel*> f16_activation_kernels() {
  std::vector<const Ukernel*> out;
  for (const Ukernel* u : kernel_list()) {
    if (std::string(u->lhs->name).starts_with("lhs_pack_f16p")) out.push_back(u);
  }
  return out;
}

std::vector<float> run(const Ukernel& u, size_t m, size_t n, size_t k, const std::vector<float>& x,
                       const std::vector<uint8_t>& rows) {
  const TileParams p = kernel_params(u);
  AlignedBuffer lp(lhs_packed_size(u, p, m, k)), rp(rhs_packed_size(u, p, n, k));
  std::fill(rp.data(), rp.data() + rhs_packed_size(u, p, n, k), uint8_t{0});
  u.lhs->run(m, k, p.mr, p.kr, p.sr, x.data(), k * 4, lp.data());
  u.rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rp.data());
  std::vector<float> dst(m * n, NAN);
  u.run(m, n, k, lp.data(), rp.data(), dst.data(), n * 4, -INFINITY, INFINITY);
  return dst;
}

float f16(float x) { return fp16_to_fp32(fp32_to_fp16(x)); }

class F16Activations : public ::testing::TestWithParam<const Ukernel*> {
 protected:
  void SetUp() override {
    if (auto why = test::why_unavailable(*GetParam()); !why.empty()) GTEST_SKIP() << GetParam()->name << ": " << why;
  }
};

TEST_P(F16Activations, EqualTheProductOfTheirF16Values) {
  const Ukernel& u = *GetParam();
  const TileParams p = kernel_params(u);
  for (size_t k : {32, 96, 512}) {
    const size_t m = 2 * p.mr + 3, n = 3 * p.nr + 5;
    std::vector<float> x = test::random_floats(m * k, k);
    for (size_t i = 0; i < m; i += 3) x[i * k + 5] *= 300.0f;  // an outlier in some rows: no int8 step
    std::vector<float> w_f32;
    const std::vector<uint8_t> rows = test::random_weights(WeightType::q4_0, n, k, k + 1, &w_f32);
    const std::vector<float> w = test::dequantized(WeightType::q4_0, rows, n, k);  // d·(q − 8) in F32
    const std::vector<float> got = run(u, m, n, k, x, rows);
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double rounded = 0, exact = 0, s = 0;
        for (size_t c = 0; c < k; ++c) {
          rounded += static_cast<double>(f16(x[i * k + c])) * f16(w[j * k + c]);
          exact += static_cast<double>(x[i * k + c]) * w[j * k + c];
          s += std::fabs(static_cast<double>(x[i * k + c]) * w[j * k + c]);
        }
        const double g = got[i * n + j];
        ASSERT_LE(std::fabs(g - rounded), static_cast<double>(k) * std::ldexp(1.0, -22) * s + 1e-30)
            << u.name << " k=" << k << " (" << i << ", " << j << ")";
        ASSERT_LE(std::fabs(g - exact), 2e-3 * s + 1e-30) << u.name << " k=" << k << " (" << i << ", " << j << ")";
      }
    }
  }
}

TEST_P(F16Activations, ActivationBeyondF16MakesItsRowNaN) {
  const Ukernel& u = *GetParam();
  const TileParams p = kernel_params(u);
  const size_t m = p.mr + 2, n = p.nr + 3, k = 64;
  std::vector<float> x = test::random_floats(m * k, 3);
  x[1 * k + 40] = 65520.0f;  // rounds to Inf in F16
  x[(m - 1) * k + 3] = -1e6f;
  x[2 * k + 7] = 65504.0f;  // the largest F16: an ordinary value
  const std::vector<uint8_t> rows = test::random_weights(WeightType::q4_0, n, k, 4);
  const std::vector<float> got = run(u, m, n, k, x, rows);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const bool poisoned = i == 1 || i == m - 1;
      EXPECT_EQ(std::isnan(got[i * n + j]), poisoned) << u.name << " (" << i << ", " << j << "): " << got[i * n + j];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(KernelList, F16Activations, ::testing::ValuesIn(f16_activation_kernels()),
                         [](const ::testing::TestParamInfo<const Ukernel*>& p) { return std::string(p.param->name); });

}  // namespace
}  // namespace qmm
