// Dequantization of every supported GGML type against hand-built blocks: the tests encode
// known quantized values into the documented block layout (the inverse direction of the
// decoder) and expect value = formula(q, scales) exactly.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>

#include "core/blocks.h"
#include "core/error.h"
#include "core/fp16.h"
#include "gguf/dequant.h"

namespace qmm {
namespace {

using namespace gguf;

uint16_t h(float f) { return fp32_to_fp16(f); }
template <class T>
void put(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

std::vector<float> deq(uint32_t type, const std::vector<uint8_t>& b, size_t k, size_t rows = 1) {
  std::vector<float> y(k * rows);
  dequantize_rows(type, b.data(), y.data(), rows, k);
  return y;
}

TEST(Dequant, TypeTable) {
  EXPECT_STREQ(ggml_type_name(kQ4_0), "q4_0");
  EXPECT_STREQ(ggml_type_name(kQ6_K), "q6_K");
  EXPECT_STREQ(ggml_type_name(kBF16), "bf16");
  EXPECT_STREQ(ggml_type_name(4), "unknown");
  EXPECT_EQ(ggml_row_bytes(kF32, 7), 28u);
  EXPECT_EQ(ggml_row_bytes(kQ4_0, 64), 36u);
  EXPECT_EQ(ggml_row_bytes(kQ4_1, 32), 20u);
  EXPECT_EQ(ggml_row_bytes(kQ5_0, 32), 22u);
  EXPECT_EQ(ggml_row_bytes(kQ5_1, 32), 24u);
  EXPECT_EQ(ggml_row_bytes(kQ8_0, 32), 34u);
  EXPECT_EQ(ggml_row_bytes(kQ4_K, 512), 288u);
  EXPECT_EQ(ggml_row_bytes(kQ6_K, 256), 210u);
  EXPECT_EQ(ggml_row_bytes(kBF16, 3), 6u);
  EXPECT_THROW(ggml_row_bytes(kQ4_K, 128), Error);
  EXPECT_THROW(ggml_row_bytes(4, 32), Error);
  EXPECT_THROW(ggml_row_bytes(kF32, ~0ull), Error);
  EXPECT_TRUE(ggml_can_dequantize(kQ6_K));
  EXPECT_FALSE(ggml_can_dequantize(kQ3_K));
  std::vector<uint8_t> b(110);
  float y[256];
  EXPECT_THROW(dequantize_rows(kQ3_K, b.data(), y, 1, 256), Error);
}

TEST(Dequant, F32F16BF16) {
  std::vector<uint8_t> b(12);
  put<float>(b.data(), 1.25f);
  put<float>(b.data() + 4, -3.0f);
  put<float>(b.data() + 8, 1e-30f);
  EXPECT_EQ(deq(kF32, b, 3), (std::vector<float>{1.25f, -3.0f, 1e-30f}));
  std::vector<uint8_t> f16(6);
  put<uint16_t>(f16.data(), 0x3c00);      // 1
  put<uint16_t>(f16.data() + 2, 0xc000);  // -2
  put<uint16_t>(f16.data() + 4, 0x0001);  // smallest subnormal
  EXPECT_EQ(deq(kF16, f16, 3), (std::vector<float>{1.0f, -2.0f, 0x1p-24f}));
  std::vector<uint8_t> bf(6);
  put<uint16_t>(bf.data(), 0x3f80);      // 1
  put<uint16_t>(bf.data() + 2, 0xc0a0);  // -5
  put<uint16_t>(bf.data() + 4, 0x3fc1);  // 1.5078125
  EXPECT_EQ(deq(kBF16, bf, 3), (std::vector<float>{1.0f, -5.0f, 1.5078125f}));
}

TEST(Dequant, Q4_0AndQ8_0MatchCore) {
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  std::vector<float> x(2 * 64);
  for (float& v : x) v = nd(rng);
  for (WeightType t : {WeightType::q4_0, WeightType::q8_0}) {
    std::vector<uint8_t> q(2 * row_bytes(t, 64));
    quantize_rows(t, x.data(), q.data(), 2, 64);
    std::vector<float> want(128);
    for (int r = 0; r < 2; ++r) dequantize_row(t, q.data() + r * row_bytes(t, 64), want.data() + r * 64, 64);
    EXPECT_EQ(deq(static_cast<uint32_t>(t), q, 64, 2), want);
  }
}

TEST(Dequant, Q4_1) {
  std::vector<uint8_t> b(2 * 20);
  for (int blk = 0; blk < 2; ++blk) {
    uint8_t* p = b.data() + blk * 20;
    put(p, h(0.5f + blk));
    put(p + 2, h(-3.0f));
    for (int j = 0; j < 16; ++j) p[4 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  }
  const auto y = deq(kQ4_1, b, 64);
  for (int blk = 0; blk < 2; ++blk) {
    const float d = 0.5f + static_cast<float>(blk);
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(y[blk * 32 + j], static_cast<float>(j) * d - 3.0f);
      EXPECT_EQ(y[blk * 32 + 16 + j], static_cast<float>(15 - j) * d - 3.0f);
    }
  }
}

// Q5_0 / Q5_1: element i has 5 bits: the nibble (low nibbles for i < 16, high for i >= 16)
// and bit i of the 32-bit qh.
void encode_q5(uint8_t* qh_qs, const int* q) {
  uint32_t qh = 0;
  uint8_t* qs = qh_qs + 4;
  for (int i = 0; i < 32; ++i) {
    if (q[i] & 16) qh |= 1u << i;
    if (i < 16) qs[i] = static_cast<uint8_t>(q[i] & 15);
    else qs[i - 16] |= static_cast<uint8_t>((q[i] & 15) << 4);
  }
  std::memcpy(qh_qs, &qh, 4);
}

TEST(Dequant, Q5_0) {
  int q[32];
  for (int i = 0; i < 32; ++i) q[i] = (i * 7 + 3) % 32;
  std::vector<uint8_t> b(22, 0);
  put(b.data(), h(0.25f));
  encode_q5(b.data() + 2, q);
  const auto y = deq(kQ5_0, b, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], static_cast<float>(q[i] - 16) * 0.25f) << i;
}

TEST(Dequant, Q5_1) {
  int q[32];
  for (int i = 0; i < 32; ++i) q[i] = (i * 11 + 5) % 32;
  std::vector<uint8_t> b(24, 0);
  put(b.data(), h(0.125f));
  put(b.data() + 2, h(-1.5f));
  encode_q5(b.data() + 4, q);
  const auto y = deq(kQ5_1, b, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], static_cast<float>(q[i]) * 0.125f - 1.5f) << i;
}

// Q4_K: sub-block s (0..7) of 32 values has a 6-bit scale sc[s] and min m[s]:
// bytes 0-3: sc[0..3] | (sc[4..7] >> 4) << 6; bytes 4-7: m[0..3] | (m[4..7] >> 4) << 6;
// bytes 8-11: (sc[4..7] & 15) | (m[4..7] & 15) << 4. Values 64*p + l (l < 32) are the low
// nibbles of qs[32p + l] (sub-block 2p), values 64*p + 32 + l the high nibbles (2p + 1).
TEST(Dequant, Q4_K) {
  const int sc[8] = {1, 63, 17, 40, 5, 33, 62, 48};
  const int mn[8] = {0, 9, 63, 21, 50, 1, 37, 16};
  std::vector<uint8_t> b(144, 0);
  put(b.data(), h(0.5f));
  put(b.data() + 2, h(0.25f));
  uint8_t* s = b.data() + 4;
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>(mn[j] | ((mn[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
  }
  int q[256];
  for (int i = 0; i < 256; ++i) q[i] = (i * 5 + i / 32) % 16;
  for (int p = 0; p < 4; ++p) {
    for (int l = 0; l < 32; ++l) b[16 + 32 * p + l] = static_cast<uint8_t>(q[64 * p + l] | (q[64 * p + 32 + l] << 4));
  }
  const auto y = deq(kQ4_K, b, 256);
  for (int i = 0; i < 256; ++i) {
    const int sub = i / 32;
    const float d = 0.5f * static_cast<float>(sc[sub]), m = 0.25f * static_cast<float>(mn[sub]);
    EXPECT_EQ(y[i], d * static_cast<float>(q[i]) - m) << i;
  }
}

// Q6_K: value i (6 bits, minus 32) of half n (128 values), position r = i % 128,
// quarter g = r / 32, l = r % 32: low nibble in ql[64n + l + 32 (g & 1)] (low nibble for
// g < 2, high for g >= 2), high 2 bits in qh[32n + l] at bit 2g; scale sc[8n + 2g + l / 16].
TEST(Dequant, Q6_K) {
  std::vector<uint8_t> b(210, 0);
  int q[256];
  for (int i = 0; i < 256; ++i) q[i] = (i * 13 + 7) % 64;
  int8_t sc[16];
  for (int j = 0; j < 16; ++j) sc[j] = static_cast<int8_t>(j * 17 - 128);
  for (int i = 0; i < 256; ++i) {
    const int n = i / 128, r = i % 128, g = r / 32, l = r % 32;
    uint8_t& lo = b[64 * n + l + 32 * (g & 1)];
    lo |= static_cast<uint8_t>((q[i] & 15) << (g >= 2 ? 4 : 0));
    b[128 + 32 * n + l] |= static_cast<uint8_t>((q[i] >> 4) << (2 * g));
  }
  std::memcpy(b.data() + 192, sc, 16);
  put(b.data() + 208, h(0.0625f));
  const auto y = deq(kQ6_K, b, 256);
  for (int i = 0; i < 256; ++i) {
    const int n = i / 128, r = i % 128, g = r / 32, l = r % 32;
    const float want = 0.0625f * static_cast<float>(sc[8 * n + 2 * g + l / 16]) * static_cast<float>(q[i] - 32);
    EXPECT_EQ(y[i], want) << i;
  }
}

// general.alignment 1 can place rows at odd addresses: same values as from aligned rows.
TEST(Dequant, OddAddresses) {
  std::mt19937 rng(3);
  std::vector<uint8_t> raw(2 * 210 + 1);
  for (auto& b : raw) b = static_cast<uint8_t>(rng() & 0x3b);  // finite f16 scales
  for (uint32_t t : {kF16, kBF16, kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0, kQ4_K, kQ6_K}) {
    const size_t k = ggml_block_size(t) == 256 ? 256 : 64, rb = ggml_row_bytes(t, k);
    std::vector<uint8_t> even(raw.begin() + 1, raw.begin() + 1 + static_cast<std::ptrdiff_t>(2 * rb));
    std::vector<float> a(2 * k), b(2 * k);
    dequantize_rows(t, even.data(), a.data(), 2, k);
    dequantize_rows(t, raw.data() + 1, b.data(), 2, k);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0) << ggml_type_name(t);
  }
}

TEST(Dequant, ManyRows) {
  std::vector<uint8_t> b(3 * 210, 0);
  for (int r = 0; r < 3; ++r) {
    put(b.data() + r * 210 + 208, h(1.0f));
    b[r * 210 + 192] = static_cast<uint8_t>(r + 1);  // scale of the first 16 values
    b[r * 210] = 0x1;                                 // value 0: q = 1 - 32
  }
  const auto y = deq(kQ6_K, b, 256, 3);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(y[r * 256], static_cast<float>((r + 1) * (1 - 32)));
}

}  // namespace
}  // namespace qmm
