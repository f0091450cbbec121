// The AMX-BF16 GEMMs (kernels/x86/matmul_clamp_f32_bf16p_amxbf16.h): the BF16 rounding of their
// LHS packer, their error against the F32 product, and their selection. (The generated kernel
// tests compare them with their references, tests/test_kernels.cpp.)
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"
#include "matmul/matmul.h"
#include "matmul/select.h"
#include "test_util.h"

#if defined(__x86_64__)
#include "kernels/x86/lhs_quant_pack_bf16p16x32_f32.h"
#endif

namespace qmm {
namespace {

#if defined(__x86_64__)

// Round to nearest even; zero and F32 denormals to a signed zero; NaN and ±Inf to NaN; a value
// within half a step of FLT_MAX to Inf. Both packers, value by value.
TEST(Bf16Gemms, LhsRoundingIsTheStatedOne) {
  struct Case {
    uint32_t bits;
    uint16_t want;
  };
  const Case cases[] = {
      {0x3f800000, 0x3f80},  // 1
      {0xc0000000, 0xc000},  // -2
      {0x3f808000, 0x3f80},  // tie, even below
      {0x3f818000, 0x3f82},  // tie, even above
      {0x3f808001, 0x3f81},  // above the tie
      {0x3f807fff, 0x3f80},  // below the tie
      {0x00000001, 0x0000},  // denormal
      {0x80400000, 0x8000},  // negative denormal
      {0x00000000, 0x0000},  {0x80000000, 0x8000},
      {0x7f800000, 0x7fc0},  // +Inf
      {0xff800000, 0x7fc0},  // -Inf
      {0x7fc00001, 0x7fc0},  // NaN
      {0x7f7fffff, 0x7f80},  // FLT_MAX rounds to Inf
      {0x00800000, 0x0080},  // the smallest normal
  };
  std::vector<float> row(32, 0.5f);
  for (size_t i = 0; i < std::size(cases); ++i) row[i] = std::bit_cast<float>(cases[i].bits);
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(bf16p::bf16_from_f32(row[i]), cases[i].want) << std::hex << cases[i].bits;
  }
  for (const LhsPacker* p : {&lhs_quant_pack_bf16p16x32_f32_ref, &lhs_quant_pack_bf16p16x32_f32_avx512}) {
    if (p != &lhs_quant_pack_bf16p16x32_f32_ref && !cpu_info().has(kFeatAVX512F | kFeatAVX512BW)) continue;
    AlignedBuffer out(p->packed_size(1, 32, 16, 4, 2));
    p->run(1, 32, 16, 4, 2, row.data(), 32 * 4, out.data());
    for (size_t i = 0; i < std::size(cases); ++i) {
      uint16_t got;
      std::memcpy(&got, out.data() + 2 * i, 2);
      EXPECT_EQ(got, cases[i].want) << p->name << " " << std::hex << cases[i].bits;
    }
    for (size_t i = 64; i < out.size(); ++i) ASSERT_EQ(out.data()[i], 0) << p->name << ": rows beyond m are zero";
    EXPECT_FALSE(p->block_scales) << p->name << ": plain values, no scales (the layout test reads the flag)";
  }
}

// What the path computes against the F32 product: BF16 activations and weights (each rounded
// by at most 2^-9 relative), exact products, F32 sums, so |y − y_f32| ≤ (2^-8 + 2^-17)·S plus
// the sums' k·2^-23·S, S = Σ|a|·|w| (the dequantized weights). The references everywhere; the
// AMX kernels where the CPU has AMX-BF16.
TEST(Bf16Gemms, ErrorAgainstTheF32ProductIsBounded) {
  size_t checked = 0;
  for (const Ukernel* u : kernel_list()) {
    if (!u->reference) continue;
    for (const Ukernel* v : {u->reference, u}) {
      if (!test::why_unavailable(*v).empty()) continue;
      const size_t m = 19, n = 37, k = 2 * std::max<size_t>(64, block_len(u->type));
      const std::vector<float> a = test::random_floats(m * k, 5);
      const std::vector<uint8_t> rows = test::random_weights(u->type, n, k, 6);
      const std::vector<float> w = test::dequantized(u->type, rows, n, k);
      const TileParams p = kernel_params(*v);
      AlignedBuffer lp(lhs_packed_size(*v, p, m, k)), rp(rhs_packed_size(*v, p, n, k));
      v->lhs->run(m, k, p.mr, p.kr, p.sr, a.data(), k * 4, lp.data());
      v->rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rp.data());
      std::vector<float> dst(m * n);
      v->run(m, n, k, lp.data(), rp.data(), dst.data(), n * 4, -INFINITY, INFINITY);
      const double rel = std::ldexp(1.0, -8) + std::ldexp(1.0, -17) + static_cast<double>(k) * std::ldexp(1.0, -23);
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
          double y = 0, s = 0;
          for (size_t c = 0; c < k; ++c) {
            y += static_cast<double>(a[i * k + c]) * w[j * k + c];
            s += std::fabs(static_cast<double>(a[i * k + c]) * w[j * k + c]);
          }
          ASSERT_LE(std::fabs(dst[i * n + j] - y), rel * s + 1e-30) << v->name << " (" << i << ", " << j << ")";
        }
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 5u) << "the five references";
}

// Where AMX-BF16 is granted, its GEMMs come first for their types, with the AVX-512 VNNI GEMV
// over the same weights; `--disable amxbf16` gives the AMX-INT8 GEMM back (VNNI's for IQ4_NL,
// which AMX-INT8 lacks). A CPU described, so this runs on any x86 build.
TEST(Bf16Gemms, SelectedWhereGrantedAndDisabledByName) {
  CpuInfo cpu = cpu_info();
  cpu.features |= isa_features(Isa::amxbf16) | isa_features(Isa::amx) | isa_features(Isa::avx512vnni);
  for (WeightType t : {WeightType::q4_0, WeightType::q8_0, WeightType::q4_k, WeightType::q6_k, WeightType::iq4_nl}) {
    const KernelPair pair = select_kernels(t, KernelFilter{}, cpu);
    EXPECT_EQ(pair.gemm->isa, Isa::amxbf16) << type_name(t);
    EXPECT_EQ(pair.gemv->isa, Isa::avx512vnni) << type_name(t);
    EXPECT_TRUE(shares_packed_rhs(*pair.gemm, *pair.gemv)) << type_name(t);
    const KernelPair off = select_kernels(t, parse_kernel_filter("", "amxbf16"), cpu);
    const bool has_int8_amx = t != WeightType::iq4_nl;
    EXPECT_EQ(off.gemm->isa, has_int8_amx ? Isa::amx : Isa::avx512vnni) << type_name(t);
    EXPECT_EQ(off.gemv, pair.gemv) << type_name(t);
  }
  // Below its measured rows the next GEMM on the same weights serves (select.cpp gemm_min_rows).
  // Below those, AVX-512 VNNI's (the AMX-INT8 tiles waste most of their products under 12 rows).
  const KernelPair q4 = select_kernels(WeightType::q4_0, KernelFilter{}, cpu);
  ASSERT_NE(q4.few[0].gemm, nullptr);
  EXPECT_EQ(q4.few[0].gemm->isa, Isa::amx);
  EXPECT_EQ(q4.few[0].below, gemm_min_rows(*q4.gemm));
  ASSERT_NE(q4.few[1].gemm, nullptr);
  EXPECT_EQ(q4.few[1].gemm->isa, Isa::avx512vnni);
  EXPECT_EQ(q4.few[1].below, gemm_min_rows(*q4.few[0].gemm));
  EXPECT_GT(q4.few[0].below, q4.few[1].below);
  EXPECT_GT(q4.few[1].below, 2u);
  const KernelPair q6 = select_kernels(WeightType::q6_k, KernelFilter{}, cpu);
  ASSERT_NE(q6.few[0].gemm, nullptr);
  EXPECT_EQ(q6.few[0].gemm->isa, Isa::amx);
  EXPECT_TRUE(shares_packed_rhs(*q6.few[0].gemm, *q6.gemm));
  ASSERT_NE(q6.few[1].gemm, nullptr);
  EXPECT_TRUE(shares_packed_rhs(*q6.few[1].gemm, *q6.gemm));
  // Without AMX-BF16 the AMX-INT8 GEMM leads, and VNNI serves below 12 rows.
  const KernelPair q6_int8 = select_kernels(WeightType::q6_k, parse_kernel_filter("", "amxbf16"), cpu);
  ASSERT_NE(q6_int8.few[0].gemm, nullptr);
  EXPECT_EQ(q6_int8.few[0].gemm->isa, Isa::avx512vnni);
  EXPECT_EQ(q6_int8.few[1].gemm, nullptr);
  // Allowed alone, AMX-BF16 serves every m > 1.
  EXPECT_EQ(select_kernels(WeightType::q4_0, parse_kernel_filter("amxbf16", ""), cpu).few[0].gemm, nullptr);
  CpuInfo no_bf16 = cpu;
  no_bf16.features &= ~kFeatAMXBF16;
  const KernelPair pair = select_kernels(WeightType::q4_0, KernelFilter{}, no_bf16);
  EXPECT_EQ(pair.gemm->isa, Isa::amx);
  ASSERT_FALSE(pair.skipped.empty());
  EXPECT_NE(pair.skipped[0].find("amx-bf16"), std::string::npos) << pair.skipped[0];
}

// On this CPU: m = 1 runs the GEMV, 1 < m < few[0].below the next GEMMs (their bits exactly: the
// AMX-INT8 and VNNI GEMMs are twins), from few[0].below rows on the AMX-BF16 GEMM; a few-rows
// GEMM on other weights, or tiers out of order, are refused.
TEST(Bf16Gemms, FewRowsRunTheNextGemm) {
  if (auto why = unavailable_reason(Isa::amxbf16, cpu_info()); !why.empty()) GTEST_SKIP() << why;
  const size_t n = 40, k = 512;
  const std::vector<uint8_t> rows = test::random_weights(WeightType::q4_k, n, k, 3);
  const PackedWeights w = PackedWeights::pack(WeightType::q4_k, n, k, rows.data(), KernelFilter{});
  const std::array<FewRows, 2> tiers = w.few_rows();
  ASSERT_NE(tiers[0].gemm, nullptr);
  ASSERT_NE(tiers[1].gemm, nullptr);
  const size_t below = tiers[0].below;
  EXPECT_EQ(w.kernel_for(1).gemv, true);
  EXPECT_EQ(&w.kernel_for(2), tiers[1].gemm);
  EXPECT_EQ(&w.kernel_for(tiers[1].below - 1), tiers[1].gemm);
  EXPECT_EQ(&w.kernel_for(tiers[1].below), tiers[0].gemm);
  EXPECT_EQ(&w.kernel_for(below - 1), tiers[0].gemm);
  EXPECT_EQ(w.kernel_for(below).isa, Isa::amxbf16);
  const PackedWeights few = PackedWeights::pack_with(*tiers[0].gemm, w.gemv(), n, k, rows.data());
  Context ctx(1);
  for (size_t m : {size_t{2}, tiers[1].below - 1, tiers[1].below, below - 1, below, below + 17}) {
    const std::vector<float> a = test::random_floats(m * k, 9);
    std::vector<float> got(m * n), want(m * n);
    matmul(w, m, a.data(), k * 4, got.data(), n * 4, -INFINITY, INFINITY, ctx);
    matmul(few, m, a.data(), k * 4, want.data(), n * 4, -INFINITY, INFINITY, ctx);
    if (m < below) {
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << "m " << m;
    } else {
      EXPECT_NE(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << "m " << m << ": BF16, not the int8 bits";
    }
  }
  PackedWeights v = PackedWeights::pack(WeightType::q4_k, n, k, rows.data(), KernelFilter{});
  const Ukernel& scalar = *select_kernels(WeightType::q4_k, parse_kernel_filter("scalar", ""), cpu_info()).gemm;
  EXPECT_THROW(v.set_few_rows({FewRows{&scalar, 64}, FewRows{}}), Error);
  EXPECT_THROW(v.set_few_rows({tiers[1], tiers[0]}), Error);  // the wider range after the narrower
}

#else

TEST(Bf16Gemms, X86Only) { GTEST_SKIP() << "the AMX-BF16 GEMMs are x86 kernels"; }

#endif

}  // namespace
}  // namespace qmm
