// The per-channel family (qc8 / qc4 weights, per-row int8 activations): the quantizers, the
// packed layouts at known bytes, the bias in the epilogue, and the error of the whole path
// against the F32 product. The kernel-list tests (test_kernels.cpp, test_packers.cpp) cover
// every kernel of the family against the scalar reference.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/buffer.h"
#include "core/channels.h"
#include "kernels/kernel_list.h"
#include "kernels/ref/layouts_c.h"
#include "kernels/ref/matmul_clamp_f32_qai8dxp_qsi4cxp_scalar.h"
#include "kernels/ref/matmul_clamp_f32_qai8dxp_qsi8cxp_scalar.h"
#include "test_util.h"

namespace qmm {
namespace {

TEST(Channels, QuantizersRoundToTheNearestStep) {
  const size_t k = 77;
  const std::vector<float> x = test::random_floats(k, 3);
  for (WeightType t : {WeightType::qc8, WeightType::qc4}) {
    std::vector<uint8_t> row(row_bytes(t, k));
    quantize_rows(t, x.data(), row.data(), 1, k);
    std::vector<float> y(k);
    dequantize_row(t, row.data(), y.data(), k);
    const float scale = channel_scale(row.data());
    float amax = 0;
    for (float v : x) amax = std::max(amax, std::fabs(v));
    EXPECT_FLOAT_EQ(scale, amax / (t == WeightType::qc8 ? 127.0f : 7.0f)) << type_name(t);
    EXPECT_EQ(channel_bias(row.data()), 0.0f);
    for (size_t c = 0; c < k; ++c) ASSERT_LE(std::fabs(x[c] - y[c]), scale * 0.5f + 1e-6f) << type_name(t) << " c=" << c;
  }
}

TEST(Channels, NonFiniteRowGetsNaNScaleAndZeroValues) {
  std::vector<float> x(40, 1.0f);
  x[5] = INFINITY;
  std::vector<uint8_t> row(qc4_row_bytes(40));
  quantize_row_qc4(x.data(), 2.0f, row.data(), 40);
  EXPECT_TRUE(std::isnan(channel_scale(row.data())));
  for (size_t c = 0; c < 40; ++c) ASSERT_EQ(qc4_value(row.data(), c), 0);
}

// The qai8dxp bytes of a known row: zero point, scale and the interleaving (mr = 4, kr = 4).
TEST(Channels, LhsPanelLayout) {
  const Ukernel& u = matmul_clamp_f32_qai8dxp4x4_qsi8cxp8x4_4x8_scalar;
  const size_t m = 2, k = 40;  // K padded to 64
  std::vector<float> x(m * k, 0.0f);
  for (size_t c = 0; c < k; ++c) x[k + c] = static_cast<float>(c) - 10.0f;  // row 1: [-10, 29]
  std::vector<uint8_t> p(u.lhs->packed_size(m, k, 4, 4, 1));
  ASSERT_EQ(p.size(), 4u * (64 + 8));
  u.lhs->run(m, k, 4, 4, 1, x.data(), k * 4, p.data());
  const float scale = layout::qai8dxp_scale(p.data(), 4, k, 1);
  const int32_t neg_zp = layout::qai8dxp_neg_zero_point(p.data(), 4, k, 1);
  EXPECT_FLOAT_EQ(scale, 39.0f / 255.0f);
  EXPECT_EQ(layout::qai8dxp_scale(p.data(), 4, k, 0), 1.0f);  // the all-zero row (KleidiAI: scale 1, zero point 127)
  for (size_t c = 0; c < k; ++c) {
    const int q = static_cast<int8_t>(p[(c / 4) * 16 + 4 + c % 4]);  // row 1 of chunk c/4
    ASSERT_NEAR((q + neg_zp) * scale, x[k + c], scale * 0.5f + 1e-5f) << "c=" << c;
  }
}

// out = Σ a·w + bias, per column; bias and clamp in the epilogue; within the stated bound of the
// F32 product: |y_q − y| ≤ 0.02·S (qc8) and 0.15·S (qc4), S = Σ|a|·|w|.
TEST(Channels, BiasAndErrorAgainstF32Product) {
  const size_t m = 5, n = 19, k = 100;
  const std::vector<float> a = test::random_floats(m * k, 8), w = test::random_floats(n * k, 9);
  for (const Ukernel* u : {&matmul_clamp_f32_qai8dxp4x4_qsi8cxp8x4_4x8_scalar, &matmul_clamp_f32_qai8dxp4x4_qsi4cxp8x4_4x8_scalar}) {
    const bool q8 = u->type == WeightType::qc8;
    const size_t rb = row_bytes(u->type, k);
    std::vector<uint8_t> rows(n * rb);
    for (size_t j = 0; j < n; ++j) {
      const float bias = static_cast<float>(j) - 9.0f;
      (q8 ? quantize_row_qc8 : quantize_row_qc4)(&w[j * k], bias, &rows[j * rb], k);
    }
    const TileParams p = kernel_params(*u);
    AlignedBuffer lp(lhs_packed_size(*u, p, m, k)), rp(rhs_packed_size(*u, p, n, k));
    u->lhs->run(m, k, p.mr, p.kr, p.sr, a.data(), k * 4, lp.data());
    u->rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rp.data());
    std::vector<float> dst(m * n);
    u->run(m, n, k, lp.data(), rp.data(), dst.data(), n * 4, -3.0f, INFINITY);
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double y = static_cast<double>(j) - 9.0, s = 0;
        for (size_t c = 0; c < k; ++c) {
          y += static_cast<double>(a[i * k + c]) * w[j * k + c];
          s += std::fabs(a[i * k + c] * w[j * k + c]);
        }
        const double bound = (q8 ? 0.02 : 0.15) * s;
        ASSERT_LE(std::fabs(dst[i * n + j] - std::max(y, -3.0)), bound) << u->name << " (" << i << ", " << j << ")";
      }
    }
  }
}

// KleidiAI's epilogue, bit for bit: out = fl(fl(isum · s) + bias), the product rounded before the
// bias is added, not one fused multiply-add (which differs where the bias cancels the product).
// Each per-channel variant runs once with the biases and once without (its own product P, as
// adding 0 changes nothing); with the biases every output must be P + bias exactly. The biases
// nearly cancel the products of row 0, where a fused multiply-add is furthest off.
TEST(Channels, BiasIsAddedToTheRoundedProductBitForBit) {
  const size_t n = 37, k = 200;
  const std::vector<float> a = test::random_floats(5 * k, 31), w = test::random_floats(n * k, 32);
  std::vector<float> bias(n);
  for (size_t j = 0; j < n; ++j) {
    float dot = 0;
    for (size_t c = 0; c < k; ++c) dot += a[c] * w[j * k + c];
    bias[j] = -dot * (j % 3 == 0 ? 1.0f : j % 3 == 1 ? 0.999f : 0.5f);
  }
  size_t checked = 0;
  for (WeightType t : {WeightType::qc8, WeightType::qc4}) {
    const size_t rb = row_bytes(t, k);
    std::vector<uint8_t> with(n * rb), without(n * rb);
    for (size_t j = 0; j < n; ++j) {
      (t == WeightType::qc8 ? quantize_row_qc8 : quantize_row_qc4)(&w[j * k], bias[j], &with[j * rb], k);
      (t == WeightType::qc8 ? quantize_row_qc8 : quantize_row_qc4)(&w[j * k], 0.0f, &without[j * rb], k);
    }
    for (const Ukernel* u : kernel_list()) {
      if (u->type != t || !test::why_unavailable(*u).empty()) continue;
      const size_t m = u->gemv ? 1 : 5;
      const TileParams p = kernel_params(*u);
      AlignedBuffer lp(lhs_packed_size(*u, p, m, k)), rp(rhs_packed_size(*u, p, n, k));
      u->lhs->run(m, k, p.mr, p.kr, p.sr, a.data(), k * 4, lp.data());
      const auto run = [&](const std::vector<uint8_t>& rows) {
        std::memset(rp.data(), 0, rp.size());
        u->rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rp.data());
        std::vector<float> dst(m * n);
        u->run(m, n, k, lp.data(), rp.data(), dst.data(), n * 4, -INFINITY, INFINITY);
        return dst;
      };
      const std::vector<float> product = run(without), got = run(with);
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
          volatile float rounded = product[i * n + j];  // no contraction into a multiply-add here
          const float want = rounded + bias[j];
          ASSERT_EQ(got[i * n + j], want) << u->name << " (" << i << ", " << j << "): product " << rounded
                                          << " + bias " << bias[j];
        }
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 4u);  // the scalar GEMM + GEMV of each type at least
}

// The extremes of both operands: weights -128 / 127 (qc8, which quantize_row_qc8 never writes
// but raw QC8 rows may hold) and -8 / 7 (qc4), activations quantized to -128 and 127, over a
// long k: every variant of the kernel list gives the scalar kernel's result (its integer sums
// must not saturate or wrap, e.g. in vpmaddubsw's int16 pairs; a wrong sum is off by far more
// than the 1e-6 relative allowed for an epilogue that fuses its multiply-add).
TEST(Channels, ExtremeValuesMatchTheScalarKernel) {
  const size_t n = 19, k = 4096 + 17;
  std::vector<float> a = test::random_floats(5 * k, 21);
  for (size_t c = 0; c < a.size(); c += 3) a[c] = (c / 3) % 2 ? 100.0f : -100.0f;  // a = 127 / -128
  for (WeightType t : {WeightType::qc8, WeightType::qc4}) {
    const size_t rb = row_bytes(t, k);
    std::vector<uint8_t> rows(n * rb);
    for (size_t j = 0; j < n; ++j) {
      uint8_t* row = &rows[j * rb];
      const float scale = 0.01f * static_cast<float>(j + 1), bias = static_cast<float>(j);
      std::memcpy(row, &scale, 4);
      std::memcpy(row + 4, &bias, 4);
      for (size_t b = 8; b < rb; ++b) {
        const size_t c = b - 8 + j;  // the extremes, then a mix, shifted per row
        row[b] = t == WeightType::qc8 ? static_cast<uint8_t>(c % 5 == 0 ? 0x80 : c % 5 == 1 ? 0x7f : c * 37)
                                      : static_cast<uint8_t>(c % 3 == 0 ? 0x88 : c % 3 == 1 ? 0x77 : c * 37);
      }
    }
    const auto run = [&](const Ukernel& u) {
      const size_t m = u.gemv ? 1 : 5;
      const TileParams p = kernel_params(u);
      AlignedBuffer lp(lhs_packed_size(u, p, m, k)), rp(rhs_packed_size(u, p, n, k));
      u.lhs->run(m, k, p.mr, p.kr, p.sr, a.data(), k * 4, lp.data());
      u.rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rp.data());
      std::vector<float> dst(m * n);
      u.run(m, n, k, lp.data(), rp.data(), dst.data(), n * 4, -INFINITY, INFINITY);
      return dst;
    };
    const Ukernel& scalar = t == WeightType::qc8 ? matmul_clamp_f32_qai8dxp4x4_qsi8cxp8x4_4x8_scalar
                                                 : matmul_clamp_f32_qai8dxp4x4_qsi4cxp8x4_4x8_scalar;
    const std::vector<float> want = run(scalar);
    for (const Ukernel* u : kernel_list()) {
      if (u->type != t || !test::why_unavailable(*u).empty()) continue;
      const std::vector<float> got = run(*u);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-6f * std::max(1.0f, std::fabs(want[i]))) << u->name << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace qmm
