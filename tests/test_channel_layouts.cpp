// The per-channel packers are KleidiAI's, byte for byte: bytes checked at positions computed by
// hand in the comments (not through kernels/ref/layouts_c.h, which the packers share), from the
// operations of kai_lhs_quant_pack_qai8dxp_f32, kai_rhs_pack_nxk_qsi4cxp_qs4cxs1s0,
// kai_rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0_neon and kai_rhs_pack_nxk_qsi8cxp_qsi8cx_neon
// (ARM-software/kleidiai, snapshot of 2026-08-21; see docs/arm.md). Plain C++ packers: these
// run on every architecture.
#include <cmath>
#include <cstring>

#include "core/channels.h"
#include "kernels/ref/lhs_quant_pack_qai8dxp_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h"
#include "kernels/ref/rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.h"
#include "kernels/ref/rhs_pack_nxk_qsi8cxp_qsi8cx.h"
#include "test_util.h"

namespace qmm {
namespace {

template <class T>
T load_at(const std::vector<uint8_t>& v, size_t byte) {
  T x;
  std::memcpy(&x, v.data() + byte, sizeof(T));
  return x;
}
int32_t i32_at(const std::vector<uint8_t>& v, size_t byte) { return load_at<int32_t>(v, byte); }
float f32_at(const std::vector<uint8_t>& v, size_t byte) { return load_at<float>(v, byte); }

// Rows (mr = 4, kr = 8, sr = 2: kc = 4; k = 40, K = 64; panel 4·(64 + 8) = 288 bytes):
//   row 0: x = c - 10 (min -10, max 29): mul = 255/39, zero point -128 + 10·mul = -62.6 -> -63;
//   row 1: all zero: mul 1, zero point 127 (the "max" branch), q = 127;
//   row 2: -1 at c = 0, +1 at c = 1, 0 elsewhere: mul 127.5, zero point 127 - 127.5 = -0.5,
//          rounded half to even: 0 (half away from zero would give -1);
//   row 3: absent (m = 3): zero.
TEST(ChannelLayouts, LhsQai8dxpIsKleidiAIs) {
  const size_t m = 3, k = 40, mr = 4, kr = 8, sr = 2;
  std::vector<float> x(m * k, 0.0f);
  for (size_t c = 0; c < k; ++c) x[c] = static_cast<float>(c) - 10.0f;
  x[2 * k + 0] = -1.0f;
  x[2 * k + 1] = 1.0f;
  const LhsPacker& p = lhs_quant_pack_qai8dxp_f32;
  ASSERT_EQ(p.packed_size(m, k, mr, kr, sr), 288u);
  std::vector<uint8_t> out(288, 0xAA);
  p.run(m, k, mr, kr, sr, x.data(), k * 4, out.data());
  // int8 of (r, c) at (c/4)·16 + r·4 + c%4.
  EXPECT_EQ(out[0], 0x80);    // (0, 0): roundf(-10·255/39 = -65.38) - 63 = -128
  EXPECT_EQ(out[34], 0xC1);   // (0, 10) at 2·16 + 2: x = 0 -> q = zero point -63
  EXPECT_EQ(out[147], 0x7F);  // (0, 39) at 9·16 + 3: roundf(29·255/39 = 189.6) - 63 = 127
  EXPECT_EQ(out[4], 0x7F);    // (1, 0): the zero row: 127
  EXPECT_EQ(out[8], 0x80);    // (2, 0): roundf(-127.5) + 0 = -128
  EXPECT_EQ(out[9], 0x7F);    // (2, 1): roundf(127.5) = 128, clamped to 127
  EXPECT_EQ(out[10], 0x00);   // (2, 2): 0
  EXPECT_EQ(out[12], 0x00);   // (3, 0): no row 3
  // Padding columns 40..63 repeat column 39 (x = 29: roundf(189.6) - 63 = 127): (0, 40) at 160.
  EXPECT_EQ(out[160], 0x7F);
  EXPECT_EQ(out[16 * 15 + 3], 0x7F);  // (0, 63)
  EXPECT_EQ(out[16 * 15 + 4 + 3], 0x7F);  // (1, 63): the zero row's padding is 127 too
  EXPECT_EQ(out[16 * 15 + 8 + 3], 0x00);  // (2, 63): x[1·k + 39] = 0 -> zero point 0
  // Negated zero points at 4·64 = 256, scales at 272.
  EXPECT_EQ(i32_at(out, 256), 63);
  EXPECT_EQ(i32_at(out, 260), -127);
  EXPECT_EQ(i32_at(out, 264), 0);
  EXPECT_EQ(i32_at(out, 268), 0);
  EXPECT_EQ(f32_at(out, 272), 1.0f / (255.0f / 39.0f));  // 1/mul, not 39/255
  EXPECT_EQ(f32_at(out, 276), 1.0f);
  EXPECT_EQ(f32_at(out, 280), 1.0f / 127.5f);
  EXPECT_EQ(f32_at(out, 284), 0.0f);
}

// QC4 weights q(r, c) = (5r + 3c) % 16 - 8, n = 3, k = 40 (K = 64), scale s_r = r + 1, bias
// 10r - 1, packed with nr = 4, kr = 8, sr = 2 (bl = 4 bytes per row chunk).
int q4(size_t r, size_t c) { return static_cast<int>((5 * r + 3 * c) % 16) - 8; }

std::vector<uint8_t> qc4_rows(size_t n, size_t k) {
  const size_t rb = qc4_row_bytes(k);
  std::vector<uint8_t> rows(n * rb, 0);
  for (size_t r = 0; r < n; ++r) {
    const float s = static_cast<float>(r + 1), b = 10.0f * static_cast<float>(r) - 1.0f;
    std::memcpy(&rows[r * rb], &s, 4);
    std::memcpy(&rows[r * rb + 4], &b, 4);
    for (size_t c = 0; c < k; ++c) rows[r * rb + 8 + c / 2] |= static_cast<uint8_t>((q4(r, c) & 15) << (4 * (c % 2)));
  }
  return rows;
}

// Row r's byte j (0..31) holds columns 32·(j/16) + j%16 (low nibble) and that + 16 (high); byte
// j of row r sits at (j/4)·16 + r·4 + j%4. Tail at 4·32 = 128: sums ×16, scales /16, biases.
TEST(ChannelLayouts, RhsQsi4cxpIsKleidiAIs) {
  const size_t n = 3, k = 40, nr = 4, kr = 8, sr = 2;
  const RhsPacker& p = rhs_pack_nxk_qsi4cxp_qs4cxs1s0;
  ASSERT_EQ(p.packed_size(n, k, nr, kr, sr), 4u * (32 + 12));
  std::vector<uint8_t> out(p.packed_size(n, k, nr, kr, sr), 0);
  p.run(n, k, nr, kr, sr, qc4_rows(n, k).data(), out.data());
  auto nib = [](size_t r, size_t c) { return c < 40 ? q4(r, c) & 15 : 0; };
  // (r 1, byte 0): columns 0 and 16 -> at 0·16 + 4 + 0 = 4.
  EXPECT_EQ(out[4], nib(1, 0) | nib(1, 16) << 4);
  EXPECT_EQ(out[4], 0xDD);  // q(1, 0) = 5 - 8 = -3 (0xD), q(1, 16) = 53 % 16 - 8 = -3
  // (r 2, byte 1): columns 1, 17 -> at 0 + 8 + 1 = 9.
  EXPECT_EQ(out[9], nib(2, 1) | nib(2, 17) << 4);
  // (r 0, byte 21): columns 37 and 53 (53 >= k: 0) -> at 5·16 + 0 + 1 = 81.
  EXPECT_EQ(out[81], nib(0, 37));
  // Row 3 repeats row 2: (r 3, byte 6) at 1·16 + 12 + 2 = 30 equals (r 2, byte 6) at 26.
  EXPECT_EQ(out[30], out[26]);
  EXPECT_EQ(out[26], nib(2, 6) | nib(2, 22) << 4);
  int32_t sum2 = 0;
  for (size_t c = 0; c < k; ++c) sum2 += q4(2, c);
  EXPECT_EQ(i32_at(out, 128 + 8), 16 * sum2);
  EXPECT_EQ(i32_at(out, 128 + 12), 16 * sum2);     // row 3 = row 2
  EXPECT_EQ(f32_at(out, 144 + 4), 2.0f * 0.0625f);  // scale of row 1, /16
  EXPECT_EQ(f32_at(out, 144 + 12), 3.0f * 0.0625f);
  EXPECT_EQ(f32_at(out, 160 + 8), 19.0f);  // bias of row 2
  EXPECT_EQ(f32_at(out, 160 + 12), 19.0f);
}

// KleidiAI's own arguments give the same bytes: nibble rows (no header), separate scales and
// biases, signed nibbles (rhs_zero_point 0) or unsigned ones with zero point 8 (nibble = q + 8).
TEST(ChannelLayouts, RhsQsi4cxpFromUnsignedNibblesWithZeroPoint) {
  const size_t n = 5, k = 37, nr = 4, kr = 8, sr = 2, rb = (k + 1) / 2;
  const RhsPacker& p = rhs_pack_nxk_qsi4cxp_qs4cxs1s0;
  std::vector<uint8_t> want(p.packed_size(n, k, nr, kr, sr), 0);
  const std::vector<uint8_t> rows = qc4_rows(n, k);
  p.run(n, k, nr, kr, sr, rows.data(), want.data());
  std::vector<uint8_t> s4(n * rb, 0), u4(n * rb, 0);
  std::vector<float> scale(n), bias(n);
  for (size_t r = 0; r < n; ++r) {
    scale[r] = static_cast<float>(r + 1);
    bias[r] = 10.0f * static_cast<float>(r) - 1.0f;
    for (size_t c = 0; c < k; ++c) {
      s4[r * rb + c / 2] |= static_cast<uint8_t>((q4(r, c) & 15) << (4 * (c % 2)));
      u4[r * rb + c / 2] |= static_cast<uint8_t>((q4(r, c) + 8) << (4 * (c % 2)));
    }
  }
  for (int zp : {0, 8}) {
    std::vector<uint8_t> got(want.size(), 0);
    pack_nxk_qsi4cxp_qs4cxs1s0(n, k, nr, kr, sr, (zp ? u4 : s4).data(), bias.data(), scale.data(), zp, got.data());
    EXPECT_EQ(got, want) << "rhs_zero_point " << zp;
  }
  // No bias: zeros at the bias slots.
  std::vector<uint8_t> got(want.size(), 0);
  pack_nxk_qsi4cxp_qs4cxs1s0(n, k, nr, kr, sr, u4.data(), nullptr, scale.data(), 8, got.data());
  EXPECT_EQ(f32_at(got, nr * 16 + 2 * nr * 4 + 4), 0.0f);
  // The sequential-nibble packer takes the same arguments.
  std::vector<uint8_t> a(want.size(), 0), b(want.size(), 0);
  rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.run(n, k, nr, 4, 1, rows.data(), a.data());
  pack_nxk_qsi4cxps1s0_qsu4cxs1s0(n, k, nr, 4, u4.data(), bias.data(), scale.data(), 8, b.data());
  EXPECT_EQ(a, b);
}

// Sequential nibbles (nr = 4, kr = 4): element (r, c) at e = (c/4)·16 + r·4 + c%4, byte e/2,
// low nibble for even e; plain sums and scales; row 3 (beyond n = 3) stays zero.
TEST(ChannelLayouts, RhsQsi4cxps1s0IsKleidiAIs) {
  const size_t n = 3, k = 40, nr = 4, kr = 4;
  const RhsPacker& p = rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0;
  std::vector<uint8_t> out(p.packed_size(n, k, nr, kr, 1), 0);
  p.run(n, k, nr, kr, 1, qc4_rows(n, k).data(), out.data());
  // (r 2, c 5): e = 16 + 8 + 1 = 25 -> byte 12, high nibble; (r 2, c 4): byte 12, low.
  EXPECT_EQ(out[12], (q4(2, 4) & 15) | (q4(2, 5) & 15) << 4);
  EXPECT_EQ(out[14], 0);  // (r 3, c 4..5): no row 3
  int32_t sum1 = 0;
  for (size_t c = 0; c < k; ++c) sum1 += q4(1, c);
  EXPECT_EQ(i32_at(out, 128 + 4), sum1);
  EXPECT_EQ(f32_at(out, 144 + 4), 2.0f);
  EXPECT_EQ(f32_at(out, 144 + 12), 0.0f);  // row 3
}

// QC8, nr = 4, kr = 4: int8 of (r, c) at (c/4)·16 + r·4 + c%4; row 3 repeats row 2.
TEST(ChannelLayouts, RhsQsi8cxpIsKleidiAIs) {
  const size_t n = 3, k = 40, nr = 4, kr = 4, rb = qc8_row_bytes(k);
  std::vector<uint8_t> rows(n * rb, 0);
  for (size_t r = 0; r < n; ++r) {
    const float s = 0.5f * static_cast<float>(r + 1), b = static_cast<float>(r);
    std::memcpy(&rows[r * rb], &s, 4);
    std::memcpy(&rows[r * rb + 4], &b, 4);
    for (size_t c = 0; c < k; ++c) rows[r * rb + 8 + c] = static_cast<uint8_t>(static_cast<int>(7 * r + 11 * c) % 256 - 128);
  }
  const RhsPacker& p = rhs_pack_nxk_qsi8cxp_qsi8cx;
  std::vector<uint8_t> out(p.packed_size(n, k, nr, kr, 1), 0);
  ASSERT_EQ(out.size(), 4u * (64 + 12));
  p.run(n, k, nr, kr, 1, rows.data(), out.data());
  EXPECT_EQ(out[9 * 16 + 1 * 4 + 3], rows[1 * rb + 8 + 39]);  // (1, 39)
  EXPECT_EQ(out[9 * 16 + 3 * 4 + 3], rows[2 * rb + 8 + 39]);  // (3, 39) = (2, 39)
  EXPECT_EQ(out[10 * 16 + 4], 0);                             // (1, 40): padding
  int32_t sum2 = 0;
  for (size_t c = 0; c < k; ++c) sum2 += static_cast<int8_t>(rows[2 * rb + 8 + c]);
  EXPECT_EQ(i32_at(out, 256 + 8), sum2);
  EXPECT_EQ(i32_at(out, 256 + 12), sum2);
  EXPECT_EQ(f32_at(out, 272 + 12), 1.5f);
  EXPECT_EQ(f32_at(out, 288 + 12), 2.0f);
}

}  // namespace
}  // namespace qmm
