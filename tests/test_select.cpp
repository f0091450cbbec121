// Kernel selection and user overrides.
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "test_util.h"

namespace qmm {
namespace {

TEST(Select, BestAvailablePairSharesThePackedRhs) {
  for (WeightType t : {WeightType::q4_0, WeightType::q8_0, WeightType::f16, WeightType::f32}) {
    const KernelPair p = select_kernels(t, KernelFilter{}, cpu_info());
    ASSERT_NE(p.gemm, nullptr);
    ASSERT_NE(p.gemv, nullptr);
    EXPECT_FALSE(p.gemm->gemv);
    EXPECT_EQ(p.gemm->rhs, p.gemv->rhs);
    EXPECT_EQ(kernel_params(*p.gemm).nr, kernel_params(*p.gemv).nr);
    EXPECT_TRUE(test::why_unavailable(*p.gemm).empty());
    // Nothing earlier in the list for this type could have run (or counts fewer instructions
    // here: a GEMM below its SVL floor, gemm_min_svl_bytes): the choice is the best.
    for (const Ukernel* u : kernel_list()) {
      if (u == p.gemm) break;
      if (u->type == t && !u->gemv) {
        EXPECT_TRUE(!test::why_unavailable(*u).empty() || cpu_info().svl_bytes < gemm_min_svl_bytes(*u))
            << u->name << " was passed over";
      }
    }
  }
}

TEST(Select, ScalarOverrideAndDisable) {
  const KernelPair s = select_kernels(WeightType::q4_0, parse_kernel_filter("scalar", ""), cpu_info());
  EXPECT_EQ(s.gemm->isa, Isa::scalar);
  EXPECT_EQ(s.gemv->isa, Isa::scalar);
  const KernelPair best = select_kernels(WeightType::q4_0, KernelFilter{}, cpu_info());
  const KernelPair d = select_kernels(WeightType::q4_0, parse_kernel_filter("", isa_name(best.gemm->isa)), cpu_info());
  if (best.gemm->isa != Isa::scalar) {
    EXPECT_NE(d.gemm->isa, best.gemm->isa);
  }
  // An exact variant name works as an allow-list entry.
  const KernelPair byname = select_kernels(WeightType::q4_0, parse_kernel_filter(best.gemm->name, ""), cpu_info());
  EXPECT_EQ(byname.gemm, best.gemm);
}

// Naming only a GEMV variant selects it, with the GEMM whose packed RHS it reads (the weights
// are packed for the GEMM); it used to fall back to the scalar pair.
TEST(Select, NamingAGemvBringsItsGemm) {
  for (WeightType t : {WeightType::q4_0, WeightType::q8_0, WeightType::f16, WeightType::f32}) {
    for (const Ukernel* v : kernel_list()) {
      if (!v->gemv || v->type != t || !test::why_unavailable(*v).empty()) continue;
      const KernelPair p = select_kernels(t, parse_kernel_filter(v->name, ""), cpu_info());
      EXPECT_EQ(p.gemv, v) << v->name;
      EXPECT_EQ(p.gemm->rhs, v->rhs) << v->name;
      EXPECT_FALSE(p.gemm->gemv);
    }
  }
}

// An ISA in the allow-list allows that ISA's kernels and scalar, nothing else: QMM_KERNELS=avx2
// on an AVX-512 VNNI machine measures the AVX2 GEMM (it used to bring the AVX-VNNI GEMM that
// reads the same packed RHS as the AVX2 GEMV).
TEST(Select, AnIsaAllowListSelectsOnlyThatIsa) {
  for (WeightType t : {WeightType::q4_0, WeightType::q8_0, WeightType::f16, WeightType::f32}) {
    for (const Ukernel* u : kernel_list()) {
      if (u->type != t || u->gemv || !test::why_unavailable(*u).empty()) continue;
      const KernelPair p = select_kernels(t, parse_kernel_filter(isa_name(u->isa), ""), cpu_info());
      EXPECT_TRUE(p.gemm->isa == u->isa || p.gemm->isa == Isa::scalar) << isa_name(u->isa) << ": " << p.gemm->name;
      EXPECT_TRUE(p.gemv->isa == u->isa || p.gemv->isa == Isa::scalar) << isa_name(u->isa) << ": " << p.gemv->name;
    }
  }
}

TEST(Select, UnknownNamesAreErrorsWithASuggestion) {
  try {
    parse_kernel_filter("avx1024", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown ISA or kernel 'avx1024'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean '"), std::string::npos) << msg;
    EXPECT_LT(msg.size(), 300u) << "one line, not the list of every kernel: " << msg;
  }
  try {
    parse_kernel_filter("", "smee2");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'sme2'?"), std::string::npos) << e.what();
  }
  // A variant name with one typo suggests the variant.
  std::string typo = kernel_list()[0]->name;
  typo[typo.size() / 2] = typo[typo.size() / 2] == 'x' ? 'y' : 'x';
  try {
    parse_kernel_filter(typo, "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::string("did you mean '") + kernel_list()[0]->name + "'?"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_kernel_filter("", "scalar,nope"), Error);
}

// The names of the other architecture (ISAs and variants) are accepted everywhere and ignored,
// so one QMM_DISABLE=sme2 works on every machine.
TEST(Select, OtherArchitecturesNamesAreIgnored) {
#if defined(__x86_64__)
  const char* foreign_isa = "sme2";
  const char* foreign_kernel = "matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa";
#else
  const char* foreign_isa = "avx512vnni";
  const char* foreign_kernel = "matmul_clamp_f32_f32p12x1_f16p16x1_12x16_avx512_fma";
#endif
  const KernelPair best = select_kernels(WeightType::q4_0, KernelFilter{}, cpu_info());
  const KernelFilter deny = parse_kernel_filter("", std::string(foreign_isa) + "," + foreign_kernel + ",i8mm,avx2");
  EXPECT_EQ(deny.ignored.size(), 3u);  // i8mm or avx2 is the other architecture's too
  EXPECT_EQ(deny.deny.size(), 1u);
  const KernelPair d = select_kernels(WeightType::q4_0, parse_kernel_filter("", foreign_isa), cpu_info());
  EXPECT_EQ(d.gemm, best.gemm);
  // An allow-list of foreign names only leaves nothing vectorised: the scalar pair.
  const KernelFilter only_foreign = parse_kernel_filter(foreign_isa, "");
  EXPECT_EQ(only_foreign.ignored.size(), 1u);
  EXPECT_EQ(select_kernels(WeightType::q4_0, only_foreign, cpu_info()).gemm->isa, Isa::scalar);
  // Through merge, the ignored names travel along.
  EXPECT_EQ(merge(KernelFilter{}, only_foreign).ignored, only_foreign.ignored);
}

// Sets an environment variable for one scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      ::unsetenv(name_);
    } else {
      ::setenv(name_, old_.c_str(), 1);
    }
  }

 private:
  const char* name_;
  std::string old_;
};

TEST(Select, EnvironmentOverrides) {
  {
    ScopedEnv k("QMM_KERNELS", "scalar");
    ScopedEnv d("QMM_DISABLE", "");
    EXPECT_EQ(select_kernels(WeightType::q8_0, kernel_filter_from_env(), cpu_info()).gemm->isa, Isa::scalar);
  }
  {
    ScopedEnv k("QMM_KERNELS", "bogus");
    EXPECT_THROW(kernel_filter_from_env(), Error);
  }
  {
    ScopedEnv d("QMM_DISABLE", "bogus");
    EXPECT_THROW(kernel_filter_from_env(), Error);
  }
  {
    ScopedEnv d("QMM_DISABLE", "sme2,avx512vnni");  // the README's example, on any machine
    EXPECT_NO_THROW(kernel_filter_from_env());
  }
}

// Under emulation the CI asks which ISA must win (QMM_EXPECT_GEMM_ISA=sme2|i8mm|dotprod|...).
TEST(Select, ExpectedIsaWhenAsked) {
  const char* want = std::getenv("QMM_EXPECT_GEMM_ISA");
  if (!want) GTEST_SKIP() << "QMM_EXPECT_GEMM_ISA not set (only the emulated CI configurations set it)";
  const KernelPair p = select_kernels(WeightType::q4_0, kernel_filter_from_env(), cpu_info());
  EXPECT_STREQ(isa_name(p.gemm->isa), want) << p.gemm->name;
}

// The kernel list itself: names unique, GEMV kernels have mr = 1, steps are multiples of the tile.
TEST(KernelList, WellFormed) {
  for (const Ukernel* u : kernel_list()) {
    EXPECT_EQ(find_kernel(u->name), u) << "duplicate name " << u->name;
    if (!test::why_unavailable(*u).empty()) continue;
    const TileParams p = kernel_params(*u);
    EXPECT_GT(p.mr, 0u);
    EXPECT_GT(p.nr, 0u);
    if (u->gemv) {
      EXPECT_EQ(p.mr, 1u) << u->name;
    }
    EXPECT_EQ(p.m_step % p.mr, 0u) << u->name;
    EXPECT_EQ(p.n_step % p.nr, 0u) << u->name;
  }
}

}  // namespace
}  // namespace qmm
