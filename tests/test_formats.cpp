// Block formats and fp16 conversion, bit-exact with ggml / IEEE 754.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/fp16.h"
#include "core/weight_types.h"
#include "qmm/qmm.h"
#include "test_util.h"

namespace qmm {
namespace {

// Independent oracle: exact binary16 -> double by the definition.
double fp16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return s * std::ldexp(m, -24);
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : s * INFINITY;
  return s * std::ldexp(1024 + m, e - 25);
}

TEST(Fp16, EveryHalfConvertsExactlyAndBack) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    const double want = fp16_value(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_EQ(fp32_to_fp16(f) & 0x7e00, 0x7e00) << "NaN stays a quiet NaN " << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), want) << h;
    ASSERT_EQ(fp32_to_fp16(f), h) << h;
  }
}

// Round to nearest even, checked against a double-precision oracle on many floats.
TEST(Fp16, RoundsToNearestEven) {
  std::mt19937 rng(7);
  auto nearest = [](float f) {
    // Search the two neighbouring halves by value.
    uint16_t best = 0;
    double best_err = INFINITY;
    for (uint32_t h = 0; h < 0x7c00; ++h) {
      const double err = std::fabs(fp16_value(static_cast<uint16_t>(h)) - std::fabs(static_cast<double>(f)));
      if (err < best_err || (err == best_err && (h & 1) == 0)) {
        best = static_cast<uint16_t>(h);
        best_err = err;
      }
    }
    return best;
  };
  for (int i = 0; i < 100; ++i) {
    const uint32_t bits = rng() & 0x477fffffu;  // positive, below the overflow threshold
    const float f = std::bit_cast<float>(bits);
    ASSERT_EQ(fp32_to_fp16(f), nearest(f)) << f;
  }
  EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-INFINITY), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000);           // tie to even (zero)
  EXPECT_EQ(fp32_to_fp16(0x1.8p-24f), 0x0002);         // 1.5 ulp -> 2 (even)
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
}

TEST(Fp16, RowConversionsMatchScalar) {
  std::vector<float> f = test::random_floats(1001, 3, -70000.0f, 70000.0f);
  f[5] = NAN;
  f[6] = 1e-7f;
  std::vector<uint16_t> h(f.size());
  fp32_to_fp16_row(f.data(), h.data(), f.size());
  for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(h[i], fp32_to_fp16(f[i])) << i;
  std::vector<float> back(f.size());
  fp16_to_fp32_row(h.data(), back.data(), h.size());
  for (size_t i = 0; i < f.size(); ++i) {
    if (std::isnan(f[i])) continue;
    ASSERT_EQ(back[i], fp16_to_fp32(h[i])) << i;
  }
}

// ggml's quantize_row_q4_0_ref on a hand-worked block: max-magnitude value -8 -> d = 1.
TEST(Blocks, Q4_0HandWorked) {
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j % 16) - 8.0f;  // -8..7 twice
  BlockQ4_0 b;
  quantize_row_q4_0(x, &b, 32);
  EXPECT_EQ(fp16_to_fp32(b.d), 1.0f);  // d = max / -8 with max = -8
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(b.qs[j] & 0xf, j) << j;  // x[j] = j - 8  -> nibble j
    EXPECT_EQ(b.qs[j] >> 4, j) << j;   // x[j + 16] likewise
  }
  float y[32];
  dequantize_row_q4_0(&b, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], x[j]);
}

TEST(Blocks, Q4_0RoundingAndClampLikeGgml) {
  float x[32] = {};
  x[0] = 8.0f;   // max magnitude positive: d = -1, so x = 8 -> nibble (int8)(-8 + 8.5) = 0
  x[1] = -8.0f;  // -> (int8)(8 + 8.5) = 16 -> clamped to 15
  x[2] = 0.5f;   // -> (int8)(-0.5 + 8.5) = 8
  x[3] = -0.49f; // -> (int8)(0.49 + 8.5) = 8
  BlockQ4_0 b;
  quantize_row_q4_0(x, &b, 32);
  EXPECT_EQ(fp16_to_fp32(b.d), -1.0f);
  EXPECT_EQ(b.qs[0] & 0xf, 0);
  EXPECT_EQ(b.qs[1] & 0xf, 15);
  EXPECT_EQ(b.qs[2] & 0xf, 8);
  EXPECT_EQ(b.qs[3] & 0xf, 8);
}

TEST(Blocks, Q8_0HandWorked) {
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = (j - 16) * 0.5f;  // amax 8 -> d = 8/127
  BlockQ8_0 b;
  quantize_row_q8_0(x, &b, 32);
  EXPECT_EQ(b.d, fp32_to_fp16(8.0f / 127.0f));
  EXPECT_EQ(b.qs[0], -127);
  EXPECT_EQ(b.qs[16], 0);
  EXPECT_EQ(b.qs[17], static_cast<int8_t>(std::round(0.5f * (127.0f / 8.0f))));
  float zero[32] = {};
  quantize_row_q8_0(zero, &b, 32);
  EXPECT_EQ(b.d, 0);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(b.qs[j], 0);
}

// The NaN policy: a block holding NaN or ±Inf, or whose d overflows binary16, becomes d = NaN
// with zero values (no float -> int conversion of NaN/Inf: UBSan checks it in the sanitize
// build); the other blocks of the row quantize as before.
TEST(Blocks, NonFiniteBlocksQuantizeToNaN) {
  const std::vector<float> clean = test::random_floats(96, 9);
  for (WeightType t : {WeightType::q4_0, WeightType::q8_0}) {
    std::vector<uint8_t> want(row_bytes(t, 96)), got(want.size());
    quantize_rows(t, clean.data(), want.data(), 1, 96);
    for (float bad : {NAN, INFINITY, -INFINITY, 1e7f, -1e7f}) {
      std::vector<float> x = clean;
      x[32 + 5] = bad;
      quantize_rows(t, x.data(), got.data(), 1, 96);
      const size_t bb = want.size() / 3;
      uint16_t d;
      std::memcpy(&d, got.data() + bb, 2);
      EXPECT_EQ(d, kFp16NaN) << type_name(t) << " " << bad;
      for (size_t i = 2; i < bb; ++i) EXPECT_EQ(got[bb + i], t == WeightType::q4_0 ? 0x88 : 0) << type_name(t) << " " << bad;
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), bb)) << "block 0 changed";
      EXPECT_EQ(0, std::memcmp(got.data() + 2 * bb, want.data() + 2 * bb, bb)) << "block 2 changed";
      std::vector<float> y(96);
      dequantize_row(t, got.data(), y.data(), 96);
      for (size_t j = 32; j < 64; ++j) EXPECT_TRUE(std::isnan(y[j])) << j;
    }
  }
}

TEST(Blocks, RowBytesAndTypes) {
  EXPECT_EQ(row_bytes(WeightType::q4_0, 64), 36u);
  EXPECT_EQ(row_bytes(WeightType::q8_0, 64), 68u);
  EXPECT_EQ(row_bytes(WeightType::f16, 5), 10u);
  EXPECT_EQ(row_bytes(WeightType::f32, 5), 20u);
  WeightType t;
  EXPECT_TRUE(parse_type("q8_0", &t));
  EXPECT_EQ(t, WeightType::q8_0);
  EXPECT_TRUE(parse_type("Q5_K", &t));
  EXPECT_EQ(t, WeightType::q5_k);
  EXPECT_EQ(row_bytes(WeightType::q6_k, 512), 420u);
  EXPECT_FALSE(parse_type("q3_k", &t));
}

// The weight-type table (core/weight_types.h) is the one registry of types: its rows must agree
// with the block structs, with the C API's ids, and round-trip through their own codecs.
TEST(WeightTypes, TableRowsAgreeWithTheCodecsAndTheCApi) {
  const uint32_t c_api[] = {QMM_TYPE_F32,  QMM_TYPE_F16,  QMM_TYPE_Q4_0,   QMM_TYPE_Q8_0, QMM_TYPE_Q4_K,
                            QMM_TYPE_Q5_K, QMM_TYPE_Q6_K, QMM_TYPE_IQ4_NL, QMM_TYPE_QC8,  QMM_TYPE_QC4};
  std::vector<uint32_t> native;
  for (const TypeInfo& t : type_table()) {
    SCOPED_TRACE(t.name);
    EXPECT_EQ(find_type(t.id), &t);
    EXPECT_EQ(find_type(t.name), &t);  // names are unique, in any case
    EXPECT_GE(t.block_len, 1u);
    EXPECT_EQ(t.per_channel(), t.id >= 1024u);  // qmm's own rows, never a GGUF type
    if (t.native) {
      native.push_back(t.id);
      EXPECT_TRUE(t.to_f32 && t.from_f32) << "the kernels take it, so qmm reads and writes it";
    }
    if (!t.per_channel()) {
      EXPECT_EQ(row_bytes(t.type(), 512 * size_t{t.block_len}), 512 * size_t{t.block_bytes});
    }
    if (!t.to_f32 || !t.from_f32) continue;
    // -7..7 survive its codecs within a 4-bit step (a codec of another type would not).
    const size_t k = 2 * std::max<size_t>(t.block_len, 32);
    std::vector<float> x(k), y(k);
    for (size_t i = 0; i < k; ++i) x[i] = static_cast<float>(static_cast<int>(i % 15) - 7);
    std::vector<uint8_t> row(row_bytes(t.type(), k));
    quantize_rows(t.type(), x.data(), row.data(), 1, k);
    dequantize_row(t.type(), row.data(), y.data(), k);
    for (size_t i = 0; i < k; ++i) EXPECT_NEAR(y[i], x[i], 0.9f) << i;
  }
  EXPECT_EQ(native, std::vector<uint32_t>(std::begin(c_api), std::end(c_api)));
}

}  // namespace
}  // namespace qmm
