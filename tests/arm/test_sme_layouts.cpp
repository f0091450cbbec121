// The SME2 packed layouts of docs/design.md §5, checked byte by byte at SVL 512 (mr = 16, nr = 64)
// against positions computed by hand (not through kernels/ref/layouts.h, which the packers and
// the scalar oracle share). KleidiAI's kai_lhs_quant_pack_qsi8d32p_f32_neon and
// kai_rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0_neon produce the same bytes (checked
// against their source, see docs/arm.md).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/blocks.h"
#include "core/fp16.h"
#include "kernels/kernel_list.h"
#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"
#include "kernels/ref/rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0.h"

namespace qmm {
namespace {

uint16_t u16_at(const std::vector<uint8_t>& v, size_t byte) {
  uint16_t x;
  std::memcpy(&x, v.data() + byte, 2);
  return x;
}

// 16 × 64 activations. Every 32-block has amax 127 (element 31 of the block), so its scale is
// 127/127 = 1.0 (f16 0x3C00) and q = x exactly; row 9 is all zero (scale 0, q 0); row 2 holds
// ±2.5 to show the rounding (half away from zero: 3, not the 2 of round-half-even).
std::vector<float> lhs_16x64() {
  std::vector<float> x(16 * 64);
  for (size_t r = 0; r < 16; ++r) {
    for (size_t c = 0; c < 64; ++c) {
      x[r * 64 + c] = c % 32 == 31 ? 127.0f : static_cast<float>(static_cast<int>((r * 7 + c * 3) % 101) - 50);
    }
  }
  for (size_t c = 0; c < 64; ++c) x[9 * 64 + c] = 0.0f;
  x[2 * 64 + 1] = 2.5f;
  x[2 * 64 + 2] = -2.5f;
  return x;
}

TEST(SmeLayouts, LhsQsi8d32pMr16) {
  const size_t m = 16, k = 64, mr = 16, kr = 4, sr = 2;
  const LhsPacker& p = lhs_quant_pack_qsi8d32p_f32;
  ASSERT_EQ(p.packed_size(m, k, mr, kr, sr), 16u * 2 * 34);  // one panel: mr·(k/32)·(32 + 2)
  std::vector<uint8_t> out(p.packed_size(m, k, mr, kr, sr), 0xAA);
  const std::vector<float> x = lhs_16x64();
  p.run(m, k, mr, kr, sr, x.data(), k * sizeof(float), out.data());
  // int8 of (row r, col c) at (c/4)·mr·4 + r·4 + c%4:
  EXPECT_EQ(out[0], 0xCE);     // (0, 0): (0 + 0) % 101 - 50 = -50
  EXPECT_EQ(out[84], 0xFD);    // (5, 4): chunk 1 → 64, row 5 → +20, c%4 0; (35 + 12) % 101 - 50 = -3
  EXPECT_EQ(out[589], 0xED);   // (3, 37): 9·64 + 3·4 + 1; (21 + 111) % 101 - 50 = -19
  EXPECT_EQ(out[1023], 0x7F);  // (15, 63): 15·64 + 15·4 + 3, the last data byte: 127
  EXPECT_EQ(out[9], 0x03);     // (2, 1): 0 + 2·4 + 1; 2.5 rounds to 3
  EXPECT_EQ(out[10], 0xFD);    // (2, 2): -2.5 rounds to -3
  EXPECT_EQ(out[36], 0x00);    // (9, 0): 0 + 9·4 + 0; the all-zero row
  // f16 scale of (block b, row r) at mr·k + (b·mr + r)·2 = 1024 + …:
  EXPECT_EQ(u16_at(out, 1024), 0x3C00);  // (b 0, r 0) = 1.0
  EXPECT_EQ(u16_at(out, 1066), 0x3C00);  // (b 1, r 5): 1024 + (16 + 5)·2
  EXPECT_EQ(u16_at(out, 1042), 0x0000);  // (b 0, r 9): the zero row's scale is 0
  EXPECT_EQ(u16_at(out, 1086), 0x3C00);  // (b 1, r 15), the last two bytes
}

// 64 × 64 Q4_0 weights: block (row r, block b) has d = (r + 1)/2 and
// qs[j] = ((r + j + b) & 15) | ((3r + j + b) & 15) << 4, i.e. element j (low nibble) = (r+j+b)&15,
// element j + 16 (high nibble) = (3r + j + b) & 15.
std::vector<BlockQ4_0> rhs_64x64() {
  std::vector<BlockQ4_0> w(64 * 2);
  for (size_t r = 0; r < 64; ++r) {
    for (size_t b = 0; b < 2; ++b) {
      BlockQ4_0& blk = w[r * 2 + b];
      blk.d = fp32_to_fp16(static_cast<float>(r + 1) * 0.5f);
      for (size_t j = 0; j < 16; ++j) blk.qs[j] = static_cast<uint8_t>(((r + j + b) & 15) | ((3 * r + j + b) & 15) << 4);
    }
  }
  return w;
}

TEST(SmeLayouts, RhsQsi4c32ps1s0Nr64) {
  const size_t n = 64, k = 64, nr = 64, kr = 4, sr = 2;
  const RhsPacker& p = rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0;
  ASSERT_EQ(p.packed_size(n, k, nr, kr, sr), 64u * 2 * 18);  // one panel: nr·(k/32)·(16 + 2)
  std::vector<uint8_t> out(p.packed_size(n, k, nr, kr, sr), 0);
  const std::vector<BlockQ4_0> w = rhs_64x64();
  p.run(n, k, nr, kr, sr, w.data(), out.data());
  // u16 of (block b, quad q, row r) at u16 index (b·8 + q)·nr + r; element 4q + i in bits [4i+3:4i].
  // Row 5, columns 36..39 = block 1, quad 1 → u16 index 9·64 + 5 = 581, bytes 1162/1163:
  //   elements j = 4..7 are low nibbles (5 + j + 1) & 15 = 10, 11, 12, 13.
  EXPECT_EQ(out[1162], 0xBA);
  EXPECT_EQ(out[1163], 0xDC);
  EXPECT_EQ(u16_at(out, 1162), 0xDCBA);
  // Row 7, columns 20..23 = block 0, quad 5 → u16 index 5·64 + 7 = 327, byte 654:
  //   elements 20, 21 are high nibbles of qs[4], qs[5]: (21 + 4) & 15 = 9, (21 + 5) & 15 = 10.
  EXPECT_EQ(out[654], 0xA9);
  // Row 0, columns 0..3 = block 0, quad 0 → u16 index 0: elements 0..3 = 0, 1, 2, 3.
  EXPECT_EQ(u16_at(out, 0), 0x3210);
  // Nibbles stay unsigned (zero point 8 is applied by the kernel's LUTI4 table, not stored).
  // f16 d of (block b, row r) at nr·k/2 + (b·nr + r)·2 = 2048 + …:
  EXPECT_EQ(u16_at(out, 2048), 0x3800);  // (b 0, r 0): 0.5
  EXPECT_EQ(u16_at(out, 2302), 0x5000);  // (b 1, r 63): 2048 + 127·2; 32.0
  EXPECT_EQ(u16_at(out, 2048 + 2 * 3), 0x4000);  // (b 0, r 3): 2.0
}

TEST(SmeLayouts, PartialPanelLeavesRowsBeyondNZero) {
  const size_t n = 50, k = 64, nr = 64;
  const RhsPacker& p = rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0;
  std::vector<uint8_t> out(p.packed_size(n, k, nr, 4, 2), 0);
  const std::vector<BlockQ4_0> w = rhs_64x64();
  p.run(n, k, nr, 4, 2, w.data(), out.data());
  for (size_t u = 0; u < 16; ++u) {
    for (size_t r = 50; r < 64; ++r) EXPECT_EQ(u16_at(out, (u * 64 + r) * 2), 0) << "u16 row " << r;
  }
  EXPECT_EQ(u16_at(out, 2048 + 49 * 2), 0x4E40);  // (b 0, r 49): 25.0
}

TEST(SmeLayouts, Sme2ParamsAtSvl512) {
  const Ukernel* gemm = find_kernel("matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa");
  const Ukernel* gemv = find_kernel("matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot");
  if (!gemm || !gemv) GTEST_SKIP() << "this build has no SME2 kernels";
  for (size_t svl : {16u, 32u, 64u, 128u, 256u}) {
    const TileParams g = gemm->params(svl), v = gemv->params(svl);
    EXPECT_EQ(g.mr, svl / 4);
    EXPECT_EQ(g.nr, svl);  // 4·SVL/32 = SVL in bytes
    EXPECT_EQ(g.kr, 4u);
    EXPECT_EQ(g.sr, 2u);
    EXPECT_EQ(v.mr, 1u);
    EXPECT_EQ(v.nr, g.nr);
  }
  EXPECT_EQ(gemm->params(64).mr, 16u);
  EXPECT_EQ(gemm->params(64).nr, 64u);
}

}  // namespace
}  // namespace qmm
