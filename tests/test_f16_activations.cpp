// The F16-activation kernels (LHS packer lhs_pack_f16pmrx2_f32): for Q4_0 the scalar
// matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar everywhere and the SME2 FMOPA GEMM of KleidiAI's
// name where it runs; for Q4_K, Q5_K and Q6_K the scalar matmul_clamp_f32_f16p4x2_q4kp8x4_4x8_scalar /
// …_q5kp8x4… / …_q6kp8x4… and the SME2 GEMMs …f16p1vlx2_q4kp4vlx4… / …_q5kp4vlx4… / …_q6kp4vlx4… .
// Checked against oracles of their own, since the int8 scalar GEMMs are none (their activation
// rounding errs more):
//  - Q4_0: the F32 product of the F16 values they read (activations rounded to F16, weights
//    d·(q − 8) rounded to F16), summed in double: within F32 summation order, k·2^-22·S;
//  - the unrounded product (F32 activations, dequantized weights): within 2e-3·S (two F16
//    roundings, 2^-11 relative each), S = Σ|a|·|w|; for the K-quants within 3e-3·Σ|a|·W, W the
//    row's largest |w| (Q4_K, Q5_K: the F16 factors d·sc, dmin·m and the weight q·d·sc − dmin·m each
//    rounded once, relative to the terms, not to their difference; Q6_K: f16(d·sc), then
//    (q − 32)·f16(d·sc) rounded once: two roundings relative to the weight);
//  - an activation F16 cannot hold (|x| ≥ 65520) makes its whole output row NaN, like a
//    non-finite one (the packer's rule; the list-wide NaN policy test covers NaN and ±Inf).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/buffer.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/weight_types.h"
#include "matmul/matmul.h"
#include "matmul/select.h"
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
  const bool kquant = block_len(u.type) > 32;  // Q4_K, Q6_K: whole super-blocks
  for (size_t k : kquant ? std::vector<size_t>{256, 512} : std::vector<size_t>{32, 96, 512}) {
    const size_t m = 2 * p.mr + 3, n = 3 * p.nr + 5;
    std::vector<float> x = test::random_floats(m * k, k);
    for (size_t i = 0; i < m; i += 3) x[i * k + 5] *= 300.0f;  // an outlier in some rows: no int8 step
    std::vector<float> w_f32;
    const std::vector<uint8_t> rows = test::random_weights(u.type, n, k, k + 1, &w_f32);
    const std::vector<float> w = test::dequantized(u.type, rows, n, k);  // the file's weights in F32
    const std::vector<float> got = run(u, m, n, k, x, rows);
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double rounded = 0, exact = 0, s = 0, ax = 0, wmax = 0;
        for (size_t c = 0; c < k; ++c) {
          rounded += static_cast<double>(f16(x[i * k + c])) * f16(w[j * k + c]);
          exact += static_cast<double>(x[i * k + c]) * w[j * k + c];
          s += std::fabs(static_cast<double>(x[i * k + c]) * w[j * k + c]);
          ax += std::fabs(static_cast<double>(x[i * k + c]));
          wmax = std::max(wmax, std::fabs(static_cast<double>(w[j * k + c])));
        }
        const double g = got[i * n + j];
        if (kquant) {
          ASSERT_LE(std::fabs(g - exact), 3e-3 * ax * wmax + 1e-30) << u.name << " k=" << k << " (" << i << ", " << j << ")";
          continue;
        }
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
  const size_t m = p.mr + 2, n = p.nr + 3, k = block_len(u.type) > 32 ? 256 : 64;
  std::vector<float> x = test::random_floats(m * k, 3);
  x[1 * k + 40] = 65520.0f;  // rounds to Inf in F16
  x[(m - 1) * k + 3] = -1e6f;
  x[2 * k + 7] = 65504.0f;  // the largest F16: an ordinary value
  const std::vector<uint8_t> rows = test::random_weights(u.type, n, k, 4);
  const std::vector<float> got = run(u, m, n, k, x, rows);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const bool poisoned = i == 1 || i == m - 1;
      EXPECT_EQ(std::isnan(got[i * n + j]), poisoned) << u.name << " (" << i << ", " << j << "): " << got[i * n + j];
    }
  }
}

// Through the driver an activation beyond F16 never reaches the F16 GEMM: matmul() and
// matmul_group() give such calls to PackedWeights::wide(), an int8 GEMM reading the same packed
// weights (KernelPair::wide, select.cpp), whose bits they then are; in range, the F16 GEMM runs.
TEST_P(F16Activations, TheDriverTakesTheWideGemmBeyondF16) {
  const Ukernel& u = *GetParam();
  const Ukernel* wide = nullptr;
  for (const Ukernel* v : kernel_list()) {
    if (!wide && !v->gemv && v->lhs->max_abs == INFINITY && shares_packed_rhs(*v, u) && test::why_unavailable(*v).empty()) wide = v;
  }
  ASSERT_NE(wide, nullptr) << "no int8 GEMM reads " << u.name << "'s packed weights";
  const size_t m = 9, n = 72, k = 256;
  const std::vector<uint8_t> rows = test::random_weights(u.type, n, k, 5);
  PackedWeights f16 = PackedWeights::pack_with(u, u, n, k, rows.data());
  f16.set_wide(wide);
  const PackedWeights int8 = PackedWeights::pack_with(*wide, *wide, n, k, rows.data());
  EXPECT_THROW(f16.set_wide(&u), Error);  // the wide GEMM must hold every activation
  Context ctx(2);
  auto through = [&](const PackedWeights& w, const std::vector<float>& x, bool group) {
    std::vector<float> y(m * n, NAN), y1(n, NAN);
    if (group) {  // with a one-row product beside it (the GEMV, in range either way)
      const MatmulPart parts[] = {{&w, m, x.data(), y.data(), 0, 0}, {&w, 1, x.data(), y1.data(), 0, 0}};
      matmul_group(parts, ctx);
    } else {
      matmul(w, m, x.data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, ctx);
    }
    return y;
  };
  std::vector<float> x = test::random_floats(m * k, 6);
  for (bool group : {false, true}) {
    EXPECT_EQ(through(f16, x, group), run(u, m, n, k, x, rows)) << "in range: the F16 GEMM";
  }
  for (float big : {65505.0f, 1e6f, -INFINITY}) {
    x[4 * k + 7] = big;
    for (bool group : {false, true}) {
      const std::vector<float> got = through(f16, x, group), want = through(int8, x, group);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_TRUE(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))
            << big << (group ? ", group" : "") << ": output " << i << " " << got[i] << " against the int8 GEMM's " << want[i];
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(KernelList, F16Activations, ::testing::ValuesIn(f16_activation_kernels()),
                         [](const ::testing::TestParamInfo<const Ukernel*>& p) { return std::string(p.param->name); });

}  // namespace
}  // namespace qmm
