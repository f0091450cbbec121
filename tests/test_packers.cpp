// Packers: the reference layouts against docs/design.md §5 (formulas written out here again, by
// hand), every packer of the kernel list against its reference twin byte for byte, and every
// size / offset getter against what the packer writes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "core/fp16.h"
#include "core/kquants.h"
#include "kernels/ref/layouts_k.h"
#include "kernels/ref/lhs_quant_pack_qsi8d32p_f32.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/ref/rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0.h"
#include "kernels/ref/rhs_pack_nxk_qsi8c32pscalef16_qsi8c32.h"
#include "test_util.h"

namespace qmm {
namespace {

uint16_t u16_at(const std::vector<uint8_t>& b, size_t byte) {
  uint16_t v;
  std::memcpy(&v, b.data() + byte, 2);
  return v;
}

// docs/design.md §5 qsi4c32ps1s0scalef16 at SVL 512 (nr = 64, kr = 4, sr = 2) on a 64 x 64 Q4_0 matrix.
TEST(RefPackers, Qsi4c32ps1s0MatchesDesignByHand) {
  const size_t n = 64, k = 64, nr = 64;
  const std::vector<uint8_t> rows = test::random_weights(WeightType::q4_0, n, k, 11);
  const auto* blocks = reinterpret_cast<const BlockQ4_0*>(rows.data());
  const RhsPacker& p = rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0;
  ASSERT_EQ(p.packed_size(n, k, nr, 4, 2), 64u * 2 * 18);
  std::vector<uint8_t> out(p.packed_size(n, k, nr, 4, 2));
  p.run(n, k, nr, 4, 2, rows.data(), out.data());
  auto nib = [&](size_t row, size_t col) {  // GGUF: element j low nibble of qs[j], j+16 high nibble
    const BlockQ4_0& b = blocks[row * 2 + col / 32];
    const size_t j = col % 32;
    return j < 16 ? b.qs[j] & 0xf : b.qs[j - 16] >> 4;
  };
  // Row 0, columns 0..3: u16 index (b·8 + q)·nr + r = 0 -> bytes 0..1.
  EXPECT_EQ(u16_at(out, 0), nib(0, 0) | nib(0, 1) << 4 | nib(0, 2) << 8 | nib(0, 3) << 12);
  // Row 5, columns 36..39 (block 1, quad 1): u16 index (8 + 1)·64 + 5 = 581 -> byte 1162.
  EXPECT_EQ(u16_at(out, 1162), nib(5, 36) | nib(5, 37) << 4 | nib(5, 38) << 8 | nib(5, 39) << 12);
  // Row 63, columns 28..31 (block 0, quad 7, the high nibbles of qs[12..15]): index 7·64 + 63 = 511.
  EXPECT_EQ(u16_at(out, 1022), nib(63, 28) | nib(63, 29) << 4 | nib(63, 30) << 8 | nib(63, 31) << 12);
  // Scales after the 64·64/2 = 2048 data bytes: (block 1, row 2) at f16 index 1·64 + 2 = 66.
  EXPECT_EQ(u16_at(out, 2048 + 66 * 2), blocks[2 * 2 + 1].d);
  EXPECT_EQ(u16_at(out, 2048), blocks[0].d);
}

// docs/design.md §5 qsi8d32p at SVL 512 (mr = 16, kr = 4) on a 16 x 64 F32 matrix.
TEST(RefPackers, Qsi8d32pMatchesDesignByHand) {
  const size_t m = 16, k = 64, mr = 16;
  std::vector<float> x(m * k);
  for (size_t r = 0; r < m; ++r) {
    for (size_t c = 0; c < k; ++c) x[r * k + c] = static_cast<float>(r + 1) * (static_cast<float>(c % 32) - 15.0f) / 16.0f;
  }
  const LhsPacker& p = lhs_quant_pack_qsi8d32p_f32;
  ASSERT_EQ(p.packed_size(m, k, mr, 4, 1), 16u * 2 * 34);
  std::vector<uint8_t> out(p.packed_size(m, k, mr, 4, 1));
  p.run(m, k, mr, 4, 1, x.data(), k * 4, out.data());
  // Row r, block b: amax = (r+1)·16/16 = r+1 at c%32 = 31 -> q = 127; c%32 = 15 -> x = 0 -> q = 0.
  // Byte of (row r, column c) = (c/4)·mr·4 + r·4 + c%4.
  EXPECT_EQ(static_cast<int8_t>(out[(31 / 4) * 64 + 0 * 4 + 3]), 127);   // row 0, column 31
  EXPECT_EQ(static_cast<int8_t>(out[(15 / 4) * 64 + 3 * 4 + 3]), 0);     // row 3, column 15
  // row 7, column 32: x = 8·(0 − 15)/16 = −7.5, amax 8 -> roundf(−7.5 · 127/8) = roundf(−119.06) = −119
  EXPECT_EQ(static_cast<int8_t>(out[(32 / 4) * 64 + 7 * 4 + 0]), -119);
  // Scales after 16·64 data bytes: (block b, row r) at f16 index b·16 + r; scale = amax / 127.
  EXPECT_EQ(u16_at(out, 1024 + (1 * 16 + 9) * 2), fp32_to_fp16(10.0f / 127.0f));
  EXPECT_EQ(u16_at(out, 1024 + (0 * 16 + 0) * 2), fp32_to_fp16(1.0f / 127.0f));
}

TEST(RefPackers, QuantizeBlockRoundsHalfAwayFromZero) {
  float x[32] = {};
  x[0] = 127.0f;  // scale 1
  x[1] = 2.5f;
  x[2] = -2.5f;
  x[3] = 0.49999997f;
  int8_t q[32];
  EXPECT_EQ(quantize_block_qsi8d32(x, q), 1.0f);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], 3);
  EXPECT_EQ(q[2], -3);
  EXPECT_EQ(q[3], 0);
}

// Every element of the reference RHS layouts decodes to the GGUF value (accessor semantics).
TEST(RefPackers, Q8LayoutDecodesToGguf) {
  const size_t n = 19, k = 96, nr = 8, kr = 4;
  const std::vector<uint8_t> rows = test::random_weights(WeightType::q8_0, n, k, 5);
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(rows.data());
  const RhsPacker& p = rhs_pack_nxk_qsi8c32pscalef16_qsi8c32;
  std::vector<uint8_t> out(p.packed_size(n, k, nr, kr, 1));
  p.run(n, k, nr, kr, 1, rows.data(), out.data());
  const size_t panel = nr * (k / 32) * 34;
  for (size_t r = 0; r < n; ++r) {
    const uint8_t* pp = out.data() + r / nr * panel;
    for (size_t c = 0; c < k; ++c) {
      ASSERT_EQ(pp[(c / kr) * nr * kr + (r % nr) * kr + c % kr], static_cast<uint8_t>(blocks[r * 3 + c / 32].qs[c % 32]));
    }
    for (size_t b = 0; b < 3; ++b) {
      uint16_t d;
      std::memcpy(&d, pp + nr * k + (b * nr + r % nr) * 2, 2);
      ASSERT_EQ(d, blocks[r * 3 + b].d);
    }
  }
}

// The K-quant / IQ4_NL packers against their plain reference twins at every preset any
// architecture uses (kr 4: x86 and SME2, kr 8: NEON; nr up to SME2's 4·SVL at 512 bits), also
// the ones the kernel list of this CPU lacks. Random bytes as blocks: every f16 d pattern,
// ±Inf and NaN included, goes through the NaN policy of both.
TEST(RefPackers, KQuantPackersMatchTheirReferenceAtEveryPreset) {
  std::mt19937 rng(14);
  for (const RhsPacker* p : {&rhs_pack_nxk_q4kp_q4k, &rhs_pack_nxk_q5kp_q5k, &rhs_pack_nxk_q6kp_q6k,
                             &rhs_pack_nxk_iq4nlp_iq4nl}) {
    ASSERT_NE(p->reference, nullptr) << p->name;
    const size_t k = 3 * block_len(p->src_type);
    for (size_t kr : {4, 8}) {
      for (size_t nr : {4, 8, 16, 64}) {
        for (size_t n : {size_t{1}, nr + 3}) {
          std::vector<uint8_t> rows(n * row_bytes(p->src_type, k));
          for (uint8_t& b : rows) b = static_cast<uint8_t>(rng());
          const size_t size = p->packed_size(n, k, nr, kr, 2);
          std::vector<uint8_t> a(size, 0), b(size, 0);
          p->run(n, k, nr, kr, 2, rows.data(), a.data());
          p->reference->run(n, k, nr, kr, 2, rows.data(), b.data());
          ASSERT_EQ(a, b) << p->name << " kr=" << kr << " nr=" << nr << " n=" << n;
        }
      }
    }
  }
}

// The K layout accessors at kr 8 (the NEON preset) read what the packer wrote: a few bytes at
// positions worked out by hand (chunk_offset(nr 8, r, B, kr 8) = (B/8)·64 + 8r + B%8), then
// every element and scale against the kr 4 accessors on the kr 4 packing (which the scalar
// kernels, and so every kernel test, check).
template <class A4, class A8>
void expect_same_elements(const RhsPacker& p, size_t n, size_t k, const std::vector<uint8_t>& rows) {
  constexpr size_t nr = 8;
  std::vector<uint8_t> a4(p.packed_size(n, k, nr, 4, 2)), a8(p.packed_size(n, k, nr, 8, 2));
  p.run(n, k, nr, 4, 2, rows.data(), a4.data());
  p.run(n, k, nr, 8, 2, rows.data(), a8.data());
  for (size_t r = 0; r < n; ++r) {
    const uint8_t* p4 = a4.data() + r / nr * A4::panel_bytes(nr, k);
    const uint8_t* p8 = a8.data() + r / nr * A8::panel_bytes(nr, k);
    for (size_t c = 0; c < k; ++c) {
      ASSERT_EQ(A8::value(p8, nr, r % nr, c), A4::value(p4, nr, r % nr, c)) << p.name << " row " << r << " c " << c;
    }
    for (size_t g = 0; g < k / A4::kGroup; ++g) {
      ASSERT_EQ(A8::scale(p8, nr, k, r % nr, g), A4::scale(p4, nr, k, r % nr, g)) << p.name << " row " << r;
    }
    for (size_t b = 0; b < k / kBlock; ++b) ASSERT_EQ(A8::min(p8, nr, k, r % nr, b), A4::min(p4, nr, k, r % nr, b));
  }
}

TEST(RefPackers, KQuantLayoutAccessorsAtKr8) {
  const size_t n = 11, k = 512;  // two panels of nr 8, the second partial; two super-blocks
  const auto q4 = test::random_weights(WeightType::q4_k, n, k, 41);
  const auto q5 = test::random_weights(WeightType::q5_k, n, k, 42);
  const auto q6 = test::random_weights(WeightType::q6_k, n, k, 43);
  const auto nl = test::random_weights(WeightType::iq4_nl, n, k, 44);
  {  // By hand, first panel, first super-block (block).
    std::vector<uint8_t> a(rhs_pack_nxk_q4kp_q4k.packed_size(n, k, 8, 8, 2));
    rhs_pack_nxk_q4kp_q4k.run(n, k, 8, 8, 2, q4.data(), a.data());
    const auto* b3 = reinterpret_cast<const BlockQ4_K*>(q4.data() + 3 * row_bytes(WeightType::q4_k, k));
    EXPECT_EQ(a[8 * 3 + 5], b3->qs[5]);           // qs byte 5 of row 3: chunk 0
    EXPECT_EQ(a[64 * 2 + 8 * 3 + 1], b3->qs[17]);  // qs byte 17: chunk 2
    // Element 37 = sub-block 1, l 5: the high nibble of qs byte 5.
    EXPECT_EQ(layout::Q4kp8::value(a.data(), 8, 3, 37), b3->qs[5] >> 4);
  }
  {
    std::vector<uint8_t> a(rhs_pack_nxk_q6kp_q6k.packed_size(n, k, 8, 8, 2));
    rhs_pack_nxk_q6kp_q6k.run(n, k, 8, 8, 2, q6.data(), a.data());
    const auto* b2 = reinterpret_cast<const BlockQ6_K*>(q6.data() + 2 * row_bytes(WeightType::q6_k, k));
    EXPECT_EQ(a[128 * 8 + 64 * 1 + 8 * 2 + 2], b2->qh[10]);  // qh byte 10 of row 2: qh chunk 1
    // Element 138 = h 1, t 0, l 10: low nibble of ql byte 74, bits 0-1 of qh byte 42, minus 32.
    EXPECT_EQ(layout::Q6kp8::value(a.data(), 8, 2, 138), ((b2->ql[74] & 0xf) | ((b2->qh[42] & 3) << 4)) - 32);
  }
  {
    std::vector<uint8_t> a(rhs_pack_nxk_iq4nlp_iq4nl.packed_size(n, k, 8, 8, 2));
    rhs_pack_nxk_iq4nlp_iq4nl.run(n, k, 8, 8, 2, nl.data(), a.data());
    const auto* b5 = reinterpret_cast<const BlockIQ4_NL*>(nl.data() + 5 * row_bytes(WeightType::iq4_nl, k));
    EXPECT_EQ(a[64 + 8 * 5 + 4], b5->qs[12]);  // qs byte 12 of row 5: chunk 1
    EXPECT_EQ(layout::Iq4nlp8::value(a.data(), 8, 5, 28), kIq4nlValues[b5->qs[12] >> 4]);
  }
  expect_same_elements<layout::Q4kp, layout::Q4kp8>(rhs_pack_nxk_q4kp_q4k, n, k, q4);
  expect_same_elements<layout::Q5kp, layout::Q5kp8>(rhs_pack_nxk_q5kp_q5k, n, k, q5);
  expect_same_elements<layout::Q6kp, layout::Q6kp8>(rhs_pack_nxk_q6kp_q6k, n, k, q6);
  expect_same_elements<layout::Iq4nlp, layout::Iq4nlp8>(rhs_pack_nxk_iq4nlp_iq4nl, n, k, nl);
}

class PackerTest : public ::testing::TestWithParam<const Ukernel*> {};

// Packed size, panel offsets and the reference twin, for the LHS packer of every kernel.
TEST_P(PackerTest, LhsSizesOffsetsAndReference) {
  const Ukernel& u = *GetParam();
  if (auto why = test::why_unavailable(u); !why.empty()) GTEST_SKIP() << u.name << ": " << why;
  const TileParams p = kernel_params(u);
  const size_t kb = std::max<size_t>(kBlock, block_len(u.type));  // k must suit the weight type
  const size_t k_long = (65 * kBlock + kb - 1) / kb * kb;          // > 64 blocks: packers that go in pieces
  for (size_t k : {kb, 3 * kb, 5 * kb, k_long}) {
    for (size_t m : {size_t{1}, p.mr - 1, p.mr, p.mr + 1, 2 * p.mr + 3}) {
      if (m == 0 || (u.gemv && m != 1)) continue;
      const std::vector<float> x = test::random_floats(m * k, m * 31 + k);
      const size_t size = lhs_packed_size(u, p, m, k);
      std::vector<uint8_t> a(size + 64, 0xcd), b(size + 64, 0xcd);
      u.lhs->run(m, k, p.mr, p.kr, p.sr, x.data(), k * 4, a.data());
      for (size_t i = size; i < a.size(); ++i) ASSERT_EQ(a[i], 0xcd) << "wrote past packed_size, m=" << m << " k=" << k;
      if (u.lhs->reference) {
        u.lhs->reference->run(m, k, p.mr, p.kr, p.sr, x.data(), k * 4, b.data());
        ASSERT_EQ(a, b) << u.lhs->name << " differs from " << u.lhs->reference->name << ", m=" << m << " k=" << k;
      }
      // Packing from a later panel start writes exactly that part of the whole.
      for (size_t m_idx = p.mr; m_idx < m; m_idx += p.mr) {
        std::vector<uint8_t> part(size, 0);
        const size_t off = lhs_packed_offset(u, p, m_idx, k);
        u.lhs->run(m - m_idx, k, p.mr, p.kr, p.sr, x.data() + m_idx * k, k * 4, part.data());
        ASSERT_EQ(0, std::memcmp(part.data(), a.data() + off, size - off)) << "m_idx=" << m_idx;
      }
    }
  }
}

// Blocks with NaN, ±Inf or a scale beyond binary16 (the NaN policy): every LHS packer writes
// its reference twin's bytes, and the reference a NaN scale with zero quants.
TEST_P(PackerTest, LhsNonFiniteBlocksMatchReference) {
  const Ukernel& u = *GetParam();
  if (auto why = test::why_unavailable(u); !why.empty()) GTEST_SKIP() << u.name << ": " << why;
  const TileParams p = kernel_params(u);
  const size_t m = u.gemv ? 1 : p.mr + 1, k = 5 * std::max<size_t>(kBlock, block_len(u.type));
  std::vector<float> x = test::random_floats(m * k, 41);
  const float poison[] = {NAN, INFINITY, -INFINITY, 9e6f, -3e38f};
  for (size_t b = 0; b < 5; ++b) x[(b % m) * k + b * kBlock + 7 * b % 32] = poison[b];
  const size_t size = lhs_packed_size(u, p, m, k);
  std::vector<uint8_t> a(size), ref(size);
  u.lhs->run(m, k, p.mr, p.kr, p.sr, x.data(), k * 4, a.data());
  if (u.lhs->reference) {
    u.lhs->reference->run(m, k, p.mr, p.kr, p.sr, x.data(), k * 4, ref.data());
    EXPECT_EQ(a, ref) << u.lhs->name << " differs from " << u.lhs->reference->name;
  }
  if (is_block_type(u.type)) {
    int8_t q[kBlock];
    for (size_t b = 0; b < 5; ++b) {
      EXPECT_TRUE(std::isnan(quantize_block_qsi8d32(&x[(b % m) * k + b * kBlock], q))) << poison[b];
      for (int8_t v : q) ASSERT_EQ(v, 0);
    }
  }
}

TEST_P(PackerTest, RhsSizesOffsetsAndReference) {
  const Ukernel& u = *GetParam();
  if (auto why = test::why_unavailable(u); !why.empty()) GTEST_SKIP() << u.name << ": " << why;
  const TileParams p = kernel_params(u);
  const size_t kb = std::max<size_t>(kBlock, block_len(u.type));  // 32 is no K-quant row: size 0
  for (size_t k : {kb, 2 * kb, 5 * kb}) {
    for (size_t n : {size_t{1}, p.nr - 1, p.nr, p.nr + 1, 3 * p.nr + 5}) {
      if (n == 0) continue;
      const std::vector<uint8_t> rows = test::random_weights(u.type, n, k, n * 7 + k);
      const size_t size = rhs_packed_size(u, p, n, k);
      std::vector<uint8_t> a(size + 64, 0xcd), b(size + 64, 0xcd);
      std::memset(a.data(), 0, size);
      std::memset(b.data(), 0, size);
      u.rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), a.data());
      for (size_t i = size; i < a.size(); ++i) ASSERT_EQ(a[i], 0xcd) << "wrote past packed_size, n=" << n;
      if (u.rhs->reference) {
        u.rhs->reference->run(n, k, p.nr, p.kr, p.sr, rows.data(), b.data());
        ASSERT_EQ(a, b) << u.rhs->name << " differs from " << u.rhs->reference->name << ", n=" << n << " k=" << k;
      }
      const size_t rb = row_bytes(u.type, k);
      for (size_t n_idx = p.nr; n_idx < n; n_idx += p.nr) {
        std::vector<uint8_t> part(size, 0);
        const size_t off = rhs_packed_offset(u, p, n_idx, k);
        u.rhs->run(n - n_idx, k, p.nr, p.kr, p.sr, rows.data() + n_idx * rb, part.data());
        ASSERT_EQ(0, std::memcmp(part.data(), a.data() + off, size - off)) << "n_idx=" << n_idx;
      }
    }
  }
}

std::string kernel_name(const ::testing::TestParamInfo<const Ukernel*>& info) { return info.param->name; }

INSTANTIATE_TEST_SUITE_P(KernelList, PackerTest, ::testing::ValuesIn(kernel_list().begin(), kernel_list().end()),
                         kernel_name);

}  // namespace
}  // namespace qmm
