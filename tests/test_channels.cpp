// The per-channel family (qc8 / qc4 weights, per-row int8 activations): the quantizers, the
// packed layouts at known bytes, the bias in the epilogue, and the error of the whole path
// against the F32 product. The kernel-list tests (test_kernels.cpp, test_packers.cpp) cover
// every kernel of the family against the scalar reference.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

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

// KleidiAI's epilogue, bit for bit, from the packed operands: out = fl(fl(f · c) + bias) with
// f = (float) isum, c = s_lhs · s_rhs (the product rounded before the bias is added, as
// KleidiAI's GEMMs and NEON kernels do), except for the SME2 GEMVs, which fuse it, fma(f, c, bias),
// as KleidiAI's SME GEMVs (..._sme_dot, ..._sme2_dot, ..._sme2_sdot) do. The biases nearly cancel
// the products of row 0, where the two differ most; the test counts that they differ somewhere.
struct Expect {
  const uint8_t *lhs, *rhs;
  size_t mr, nr, kr, sr, k;
  std::string rhs_packer;
  float at(size_t i, size_t j, bool fused) const {
    const uint8_t* lp = lhs + i / mr * layout::qai8dxp_panel_bytes(mr, k);
    const bool s1s0 = rhs_packer == "rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0", q4 = rhs_packer == "rhs_pack_nxk_qsi4cxp_qs4cxs1s0";
    const size_t data = q4 || s1s0 ? layout::qsi4cxp_data_bytes(nr, k) : layout::qsi8cxp_data_bytes(nr, k);
    const uint8_t* rp = rhs + j / nr * (data + nr * 12);
    const uint8_t* tail = rp + data;
    int64_t isum = 0;
    for (size_t c = 0; c < k; ++c) {
      const int w = q4     ? layout::qsi4cxp_value(rp, nr, kr / sr, j % nr, c)
                    : s1s0 ? layout::qsi4cxps1s0_value(rp, nr, kr, j % nr, c)
                           : layout::qsi8cxp_value(rp, nr, kr, j % nr, c);
      isum += layout::qai8dxp_value(lp, mr, kr / sr, i % mr, c) * w;
    }
    // qsi4cxp stores 16·Σq and s/16 (its kernels multiply 16·q): the same f·c, exactly.
    const int32_t rsum = layout::channel_row_sum(tail, j % nr) / (q4 ? 16 : 1);
    const float s_rhs = layout::channel_scale(tail, nr, j % nr) * (q4 ? 16.0f : 1.0f);
    isum += int64_t{layout::qai8dxp_neg_zero_point(lp, mr, k, i % mr)} * rsum;
    const float f = static_cast<float>(isum), c = layout::qai8dxp_scale(lp, mr, k, i % mr) * s_rhs;
    const float bias = layout::channel_bias(tail, nr, j % nr);
    if (fused) return std::fma(f, c, bias);
    volatile float product = f * c;  // rounded here: no contraction into a multiply-add
    return product + bias;
  }
};

TEST(Channels, EpilogueIsKleidiAIsBitForBit) {
  const size_t n = 37, k = 200;
  const std::vector<float> a = test::random_floats(5 * k, 31), w = test::random_floats(n * k, 32);
  std::vector<float> bias(n);
  for (size_t j = 0; j < n; ++j) {
    float dot = 0;
    for (size_t c = 0; c < k; ++c) dot += a[c] * w[j * k + c];
    bias[j] = -dot * (j % 3 == 0 ? 1.0f : j % 3 == 1 ? 0.999f : 0.5f);
  }
  size_t checked = 0, fma_differs = 0;
  for (WeightType t : {WeightType::qc8, WeightType::qc4}) {
    const size_t rb = row_bytes(t, k);
    std::vector<uint8_t> rows(n * rb);
    for (size_t j = 0; j < n; ++j) {
      (t == WeightType::qc8 ? quantize_row_qc8 : quantize_row_qc4)(&w[j * k], bias[j], &rows[j * rb], k);
    }
    for (const Ukernel* u : kernel_list()) {
      if (u->type != t || !test::why_unavailable(*u).empty()) continue;
      const size_t m = u->gemv ? 1 : 5;
      const TileParams p = kernel_params(*u);
      AlignedBuffer lp(lhs_packed_size(*u, p, m, k)), rp(rhs_packed_size(*u, p, n, k));
      u->lhs->run(m, k, p.mr, p.kr, p.sr, a.data(), k * 4, lp.data());
      std::memset(rp.data(), 0, rp.size());
      u->rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rp.data());
      std::vector<float> got(m * n);
      u->run(m, n, k, lp.data(), rp.data(), got.data(), n * 4, -INFINITY, INFINITY);
      const Expect e{lp.data(), rp.data(), p.mr, p.nr, p.kr, p.sr, k, u->rhs->name};
      const bool fused = u->isa == Isa::sme2 && u->gemv;
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
          ASSERT_EQ(got[i * n + j], e.at(i, j, fused)) << u->name << " (" << i << ", " << j << ")"
                                                         << (fused ? ": fused" : ": product, then bias");
          fma_differs += e.at(i, j, true) != e.at(i, j, false);
        }
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 4u);        // the scalar GEMM + GEMV of each type at least
  EXPECT_GT(fma_differs, 0u);    // the data tells the two epilogues apart
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
