// What the emulated CPU reports and what selection picks there. CTest runs this suite under
// qemu in several configurations (cmake/QmmGTest.cmake) and says in QMM_EXPECT_GEMM_ISA which
// ISA the Q4_0 GEMM must come from, in QMM_EXPECT_SVL_BYTES the SVL qemu was asked for.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/cpu.h"
#include "kernels/kernel_list.h"
#include "matmul/select.h"

namespace qmm {
namespace {

TEST(ArmSelection, PicksTheExpectedIsa) {
  const char* want = std::getenv("QMM_EXPECT_GEMM_ISA");
  if (!want || !*want) GTEST_SKIP() << "QMM_EXPECT_GEMM_ISA not set (only the emulated CTest runs set it)";
  const KernelFilter filter = kernel_filter_from_env();
  const KernelPair pair = select_kernels(WeightType::q4_0, filter, cpu_info());
  // Whatever the build has, the pick must run here and be allowed by QMM_KERNELS/QMM_DISABLE.
  EXPECT_EQ(unavailable_reason(*pair.gemm, cpu_info()), "") << pair.gemm->name;
  EXPECT_TRUE(filter.permits(*pair.gemm)) << pair.gemm->name;
  bool in_build = false;
  for (const Ukernel* u : kernel_list()) {
    in_build = in_build || (u->type == WeightType::q4_0 && !u->gemv && want == std::string(isa_name(u->isa)));
  }
  if (!in_build) {
    GTEST_SKIP() << "this build has no " << want << " Q4_0 GEMM in its kernel list (picked " << pair.gemm->name << ")";
  }
  EXPECT_STREQ(isa_name(pair.gemm->isa), want) << pair.gemm->name;
  // The GEMV reads the GEMM's packed RHS; it may come from a lesser ISA with the same layout
  // (e.g. the DotProd GEMV beside the I8MM GEMM), but SME2 has its own.
  EXPECT_EQ(pair.gemv->rhs, pair.gemm->rhs) << pair.gemv->name;
  EXPECT_EQ(unavailable_reason(*pair.gemv, cpu_info()), "") << pair.gemv->name;
  if (pair.gemm->isa == Isa::sme2) {
    EXPECT_EQ(pair.gemv->isa, Isa::sme2) << pair.gemv->name;
  }
}

// The K-quants (Q4_K, Q5_K, Q6_K, IQ4_NL): where the build has a GEMM of the expected ISA for
// the type, selection picks it; where it has none (no SME2 K-quant kernel yet), it still picks
// a SIMD GEMM when one runs here and is allowed. The GEMV reads the GEMM's packed RHS.
TEST(ArmSelection, KQuantsPickTheExpectedIsa) {
  const char* want = std::getenv("QMM_EXPECT_GEMM_ISA");
  if (!want || !*want) GTEST_SKIP() << "QMM_EXPECT_GEMM_ISA not set (only the emulated CTest runs set it)";
  const KernelFilter filter = kernel_filter_from_env();
  for (WeightType t : {WeightType::q4_k, WeightType::q5_k, WeightType::q6_k, WeightType::iq4_nl}) {
    const KernelPair pair = select_kernels(t, filter, cpu_info());
    bool has_want = false, has_simd = false;
    for (const Ukernel* u : kernel_list()) {
      if (u->type != t || u->gemv) continue;
      has_want = has_want || want == std::string(isa_name(u->isa));
      has_simd = has_simd || (u->isa != Isa::scalar && unavailable_reason(*u, cpu_info()).empty() && filter.permits(*u));
    }
    if (has_want) {
      EXPECT_STREQ(isa_name(pair.gemm->isa), want) << pair.gemm->name;
    } else if (has_simd) {
      EXPECT_NE(pair.gemm->isa, Isa::scalar) << type_name(t);
    }
    EXPECT_EQ(pair.gemv->rhs, pair.gemm->rhs) << pair.gemv->name;
    EXPECT_EQ(unavailable_reason(*pair.gemv, cpu_info()), "") << pair.gemv->name;
  }
}

// Q4_0, Q4_K, Q5_K and Q6_K prefill take the F16-activation FMOPA GEMM at every SVL: it executes
// fewer instructions per MAC than the int8 SMOPA GEMM since it dequantizes each panel once for
// all row tiles (docs/arm.md; for Q4_0 below SVL 256 it did not before); either pairs with the
// SME2 SDOT GEMV on the same packed weights. Disabling it gives the int8 GEMM back.
struct F16Prefill {
  WeightType type;
  const char* f16;   // the F16-activation GEMM
  const char* int8;  // the int8 GEMM on the same packed weights (KernelPair::wide)
  const char* gemv;
  size_t int8_tile_below_vl;  // one row tile goes to the int8 GEMM below this VL (0: not checked)
};
constexpr F16Prefill kF16Prefill[] = {
    {WeightType::q4_0, "matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot", 0},
    {WeightType::q4_k, "matmul_clamp_f32_f16p1vlx2_q4kp4vlx4_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1vlx4_q4kp4vlx4_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1x4_q4kp4vlx4_1x4vl_sme2_sdot", 16},
    {WeightType::q5_k, "matmul_clamp_f32_f16p1vlx2_q5kp4vlx4_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1vlx4_q5kp4vlx4_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1x4_q5kp4vlx4_1x4vl_sme2_sdot", SIZE_MAX},
    {WeightType::q6_k, "matmul_clamp_f32_f16p1vlx2_q6kp4vlx4_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1vlx4_q6kp4vlx4_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1x4_q6kp4vlx4_1x4vl_sme2_sdot", 16},
};

TEST(ArmSelection, PrefillTakesTheF16GemmAtEverySvl) {
  const Ukernel* first = find_kernel(kF16Prefill[0].f16);
  if (first == nullptr) GTEST_SKIP() << "this build has no SME2 kernels";
  if (std::string why = unavailable_reason(*first, cpu_info()); !why.empty()) GTEST_SKIP() << why;
  const size_t svl = cpu_info().svl_bytes;
  for (const F16Prefill& want : kF16Prefill) {
    SCOPED_TRACE(type_name(want.type));
    const Ukernel* f16 = find_kernel(want.f16);
    const Ukernel* int8 = find_kernel(want.int8);
    ASSERT_NE(f16, nullptr) << want.f16;
    ASSERT_NE(int8, nullptr) << want.int8;
    EXPECT_EQ(gemm_min_svl_bytes(*f16), 0u);
    EXPECT_EQ(gemm_min_svl_bytes(*int8), 0u);
    const KernelPair pair = select_kernels(want.type, KernelFilter{}, cpu_info());
    EXPECT_EQ(pair.gemm, f16) << "SVL " << svl * 8 << ": " << pair.gemm->name;
    // Activations beyond F16 go to the int8 GEMM on the same packed weights (KernelPair::wide).
    EXPECT_EQ(pair.wide, int8) << "SVL " << svl * 8;
    ASSERT_NE(pair.gemv, nullptr);
    EXPECT_EQ(std::string(pair.gemv->name), want.gemv);
    EXPECT_TRUE(shares_packed_rhs(*pair.gemv, *f16) && shares_packed_rhs(*pair.gemv, *int8));
    const KernelPair named = select_kernels(want.type, parse_kernel_filter(f16->name, "", "test"), cpu_info());
    EXPECT_EQ(named.gemm, f16) << named.gemm->name;
    EXPECT_EQ(named.wide, nullptr) << "the allow-list names the F16 GEMM alone";
    const KernelPair denied = select_kernels(want.type, parse_kernel_filter("", f16->name, "test"), cpu_info());
    EXPECT_EQ(denied.gemm, int8) << denied.gemm->name;
  }
}

// One row tile (m <= VL) below VL int8_tile_below_vl: the int8 Q4_K / Q5_K / Q6_K GEMM executes
// fewer instructions than the F16 one, which dequantizes a panel per call (select.cpp
// gemm_min_rows), so it serves 2..VL rows. Q4_K, Q6_K: below SVL 512; Q5_K: at every SVL (its
// F16 GEMM dequantizes more per weight).
TEST(ArmSelection, KQuantOneRowTileTakesTheInt8GemmWhereItCountsFewer) {
  const Ukernel* first = find_kernel(kF16Prefill[1].f16);
  if (first == nullptr) GTEST_SKIP() << "this build has no SME2 kernels";
  if (std::string why = unavailable_reason(*first, cpu_info()); !why.empty()) GTEST_SKIP() << why;
  const size_t vl = cpu_info().svl_bytes / 4;
  for (const F16Prefill& want : kF16Prefill) {
    if (want.int8_tile_below_vl == 0) continue;
    SCOPED_TRACE(type_name(want.type));
    const KernelPair pair = select_kernels(want.type, KernelFilter{}, cpu_info());
    ASSERT_EQ(pair.gemm, find_kernel(want.f16));
    if (vl < want.int8_tile_below_vl) {
      EXPECT_EQ(pair.few[0].gemm, find_kernel(want.int8)) << "SVL " << vl * 32;
      EXPECT_EQ(pair.few[0].below, vl + 1);
    } else {
      EXPECT_EQ(pair.few[0].gemm, nullptr) << "SVL " << vl * 32 << ": the F16 GEMM counts fewer from one tile";
    }
  }
}

TEST(ArmSelection, ReportsTheEmulatedSvl) {
  const char* want = std::getenv("QMM_EXPECT_SVL_BYTES");
  if (!want || !*want) GTEST_SKIP() << "QMM_EXPECT_SVL_BYTES not set (only the emulated CTest runs set it)";
  const size_t svl = std::strtoul(want, nullptr, 10);
  EXPECT_EQ(cpu_info().svl_bytes, svl);
  EXPECT_EQ(cpu_info().has(kFeatSME | kFeatSME2), svl != 0);
}

}  // namespace
}  // namespace qmm
