// The tuner's whole-step pass (matmul/tune.h tune_steps): its decision on made-up step times,
// its lines in the tuning file (version 2) and how a later tune_weights applies them.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "matmul/tune.h"
#include "matmul/tune_internal.h"
#include "temp_dirs.h"
#include "test_util.h"

namespace qmm {
namespace {

std::string temp_dir() {
  const std::string t = test::temp_dir("qmm_tune_steps");
  EXPECT_NE(t, "");
  return t;
}

using test::read_text;

// A type whose packed layout has at least two GEMVs on this CPU (the pass has a candidate).
const Ukernel* alternative(WeightType t) {
  const Ukernel& gemm = *select_kernels(t, {}, cpu_info()).gemm;
  const Ukernel* def = select_kernels(t, {}, cpu_info()).gemv;
  for (const Ukernel* g : gemv_candidates(gemm, {}, cpu_info())) {
    if (g != def) return g;
  }
  return nullptr;
}

struct Weights {
  std::vector<PackedWeights> w;
  std::vector<PackedWeights*> ptrs;
  Weights(std::initializer_list<WeightType> types, size_t k = 256) {
    for (WeightType t : types) {
      for (size_t n : {64, 128}) {
        const std::vector<uint8_t> rows = test::random_weights(t, n, k, n + k);
        w.push_back(PackedWeights::pack(t, n, k, rows.data(), {}));
      }
    }
    for (PackedWeights& p : w) ptrs.push_back(&p);
  }
};

// Per-class plans without measuring: the defaults (a report of `threads`).
TuneReport defaults(Weights& ws, Context& ctx, const std::string& dir) {
  TuneOptions o;
  o.cache_dir = dir;
  o.measure = false;
  return tune_weights(ws.ptrs, {}, ctx, o);
}

// Made-up decode steps: 4 steps of 10 ms each, times 1 ± `jitter` per step and a slow spell of
// ± `drift` over the calls; `gain` less when every weight of `fast`'s layout decodes with `fast`.
struct StepTimer {
  const std::vector<PackedWeights*>* ws;
  const Ukernel* fast;
  uint32_t x;
  double jitter, drift, gain;
  int calls = 0;
  std::vector<double> operator()() {
    bool on = true;
    for (const PackedWeights* w : *ws) on &= !shares_packed_rhs(w->gemm(), *fast) || &w->gemv() == fast;
    const double spell = 1 + drift * std::sin(++calls / 3.0);
    std::vector<double> t(4);
    for (double& s : t) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      const double u = static_cast<double>(x >> 8) / 16777216.0 * 2 - 1;
      s = 0.010 * (1 + jitter * u) * spell * (on ? 1 - gain : 1);
    }
    return t;
  }
};

StepTuneOptions step_options(const std::string& dir) {
  StepTuneOptions o;
  o.cache_dir = dir;
  o.rounds = 16;
  return o;
}

TEST(TuneSteps, TakesAConsistentTwoPercentWinThroughNoise) {
  const Ukernel* alt = alternative(WeightType::q4_k);
  if (!alt) GTEST_SKIP() << "one Q4_K GEMV on this CPU: nothing for the whole-step pass to choose";
  Context ctx(1);
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    const std::string dir = temp_dir();
    Weights ws({WeightType::q4_k});
    TuneReport rep = defaults(ws, ctx, dir);
    StepTimer timer{&ws.ptrs, alt, seed * 2654435761u, 0.01, 0.01, 0.02};
    tune_steps(ws.ptrs, {}, rep, step_options(dir), [&] { return timer(); });
    const StepTune& st = rep.step;
    ASSERT_EQ(st.chosen.size(), 1u) << "seed " << seed << "\n" << rep.table();
    EXPECT_EQ(st.chosen[0].gemv, alt);
    for (const PackedWeights& w : ws.w) EXPECT_EQ(&w.gemv(), alt);
    for (const StepCandidate& c : st.candidates) {
      if (!c.overrides.empty() && c.overrides[0].gemv == alt) {
        EXPECT_NEAR(c.ratio, 0.98, 0.01);
        EXPECT_LT(c.ratio_bound, 1.0);
      }
    }
    EXPECT_EQ(st.steps, 4u);
    EXPECT_NE(read_text(dir + "/tune.txt").find(std::string(" ") + alt->name + " "), std::string::npos);
    EXPECT_NE(rep.table().find("whole decode steps"), std::string::npos);
  }
}

TEST(TuneSteps, NoiseOfTwoPercentIsNotAWin) {
  const Ukernel* alt = alternative(WeightType::q4_k);
  if (!alt) GTEST_SKIP() << "one Q4_K GEMV on this CPU: nothing for the whole-step pass to choose";
  Context ctx(1);
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) {
    Weights ws({WeightType::q4_k});
    TuneReport rep = defaults(ws, ctx, temp_dir());
    const Ukernel* def = &ws.w[0].gemv();
    StepTimer timer{&ws.ptrs, alt, seed * 2654435761u, 0.02, 0.02, 0.0};
    StepTuneOptions o = step_options("");
    o.persist = false;
    tune_steps(ws.ptrs, {}, rep, o, [&] { return timer(); });
    EXPECT_TRUE(rep.step.chosen.empty()) << "seed " << seed << "\n" << rep.table();
    EXPECT_LT(rep.step.noise, 0.10) << "the paired decision keeps it, not the too-noisy rule";
    for (const PackedWeights& w : ws.w) EXPECT_EQ(&w.gemv(), def);
  }
}

// Two layouts (Q4_K and Q6_K), only both overridden at once faster: the joint candidate (one
// variant, such as ymm, for every layout) wins.
TEST(TuneSteps, TriesEveryLayoutsAlternativeAtOnce) {
  const Ukernel* a4 = alternative(WeightType::q4_k);
  const Ukernel* a6 = alternative(WeightType::q6_k);
  const size_t n4 = gemv_candidates(*select_kernels(WeightType::q4_k, {}, cpu_info()).gemm, {}, cpu_info()).size();
  const size_t n6 = gemv_candidates(*select_kernels(WeightType::q6_k, {}, cpu_info()).gemm, {}, cpu_info()).size();
  if (!a4 || !a6 || tune_detail::short_name(*a4) != tune_detail::short_name(*a6) || n6 != 2) {
    GTEST_SKIP() << "needs one variant of both the Q4_K and Q6_K GEMVs, two of Q6_K (the AVX-512 zmm / ymm pairs)";
  }
  Context ctx(1);
  Weights ws({WeightType::q4_k, WeightType::q6_k});
  TuneReport rep = defaults(ws, ctx, temp_dir());
  StepTuneOptions o = step_options("");
  o.persist = false;
  tune_steps(ws.ptrs, {}, rep, o, [&] {
    const bool both = &ws.w[0].gemv() == a4 && &ws.w.back().gemv() == a6;
    return std::vector<double>(4, both ? 0.0097 : 0.010);
  });
  // per-class, Q4_K's alternatives alone (ymm, and on AVX-512 L1), Q6_K's alone, both (a4 and a6's variant)
  ASSERT_EQ(rep.step.candidates.size(), 1 + (n4 - 1) + 1 + 1);
  ASSERT_EQ(rep.step.chosen.size(), 2u) << rep.table();
  EXPECT_EQ(&ws.w[0].gemv(), a4);
  EXPECT_EQ(&ws.w.back().gemv(), a6);

  // Per-class choices mixed within a layout (one Q6_K weight already on a6): each layout's every
  // GEMV is a candidate, and the variant for every layout at once is still tried.
  Weights mixed({WeightType::q4_k, WeightType::q6_k});
  TuneReport rep2 = defaults(mixed, ctx, temp_dir());
  mixed.w.back().set_decode_plan({a6, DecodePlan::kDefaultChunkBytes, true});
  tune_steps(mixed.ptrs, {}, rep2, o, [&] {
    bool both = true;
    for (const PackedWeights& w : mixed.w) both &= &w.gemv() == a4 || &w.gemv() == a6;
    return std::vector<double>(4, both ? 0.0097 : 0.010);
  });
  EXPECT_EQ(rep2.step.candidates.size(), 1 + (n4 - 1) + 2 + 1) << rep2.table();  // + Q6_K's both GEMVs, - nothing
  ASSERT_EQ(rep2.step.chosen.size(), 2u) << rep2.table();
  for (const PackedWeights& w : mixed.w) EXPECT_TRUE(&w.gemv() == a4 || &w.gemv() == a6);
}

// The choice round-trips through the file: a later tune_weights of the same model and thread
// count applies it without measuring; another thread count, another model, a filter that
// excludes the GEMV, or a forced re-measure (qmm tune) do not.
TEST(TuneSteps, LaterLoadsApplyTheStoredChoice) {
  const Ukernel* alt = alternative(WeightType::q4_k);
  if (!alt) GTEST_SKIP() << "one Q4_K GEMV on this CPU: nothing for the whole-step pass to choose";
  const std::string dir = temp_dir();
  Context ctx(1);
  {
    Weights ws({WeightType::q4_k});
    TuneReport rep = defaults(ws, ctx, dir);
    StepTimer timer{&ws.ptrs, alt, 7, 0.0, 0.0, 0.05};
    tune_steps(ws.ptrs, {}, rep, step_options(dir), [&] { return timer(); });
    ASSERT_EQ(rep.step.chosen.size(), 1u);
  }
  const std::string text = read_text(dir + "/tune.txt");
  EXPECT_EQ(text.rfind("qmm-tune 2\n", 0), 0u);
  EXPECT_NE(text.find("\nstep 1 "), std::string::npos) << text;

  Weights again({WeightType::q4_k});
  TuneReport rep = defaults(again, ctx, dir);
  EXPECT_TRUE(rep.step.from_cache);
  ASSERT_EQ(rep.step.chosen.size(), 1u);
  for (const PackedWeights& w : again.w) EXPECT_EQ(&w.gemv(), alt);
  EXPECT_NE(rep.summary().back().find("whole decode step"), std::string::npos);
  EXPECT_NE(rep.summary().front().find("the whole-step choice below replaces its GEMV"), std::string::npos);
  bool listed = false;
  for (const std::string& line : describe_tune_cache(dir)) listed |= line.find("whole decode step") != std::string::npos;
  EXPECT_TRUE(listed);

  Context two(2);
  Weights other_threads({WeightType::q4_k});
  EXPECT_FALSE(defaults(other_threads, two, dir).step.from_cache);
  EXPECT_NE(&other_threads.w[0].gemv(), alt);

  Weights other_model({WeightType::q4_k}, 512);
  EXPECT_FALSE(defaults(other_model, ctx, dir).step.from_cache);
  EXPECT_NE(&other_model.w[0].gemv(), alt);

  Weights filtered({WeightType::q4_k});
  TuneOptions o;
  o.cache_dir = dir;
  o.measure = false;
  const KernelFilter no_alt = parse_kernel_filter("", alt->name);
  EXPECT_TRUE(tune_weights(filtered.ptrs, no_alt, ctx, o).step.chosen.empty());
  EXPECT_NE(&filtered.w[0].gemv(), alt);

  // A hostile file: the step line names a GEMV of another layout (Q4_0's): skipped, no throw.
  const std::string q40 = select_kernels(WeightType::q4_0, {}, cpu_info()).gemv->name;
  std::string hostile = read_text(dir + "/tune.txt");
  const size_t at = hostile.find(std::string(" ") + alt->name + " ");
  ASSERT_NE(at, std::string::npos);
  hostile.replace(at + 1, std::string(alt->name).size(), q40);
  std::ofstream(dir + "/tune.txt") << hostile;
  Weights foreign({WeightType::q4_k});
  o.force = false;
  EXPECT_TRUE(tune_weights(foreign.ptrs, {}, ctx, o).step.chosen.empty());
  EXPECT_NE(&foreign.w[0].gemv(), alt);

  Weights forced({WeightType::q4_k});
  o.force = true;
  o.timer = [](const PackedWeights&, const DecodePlan&) { return 1e-3; };
  EXPECT_FALSE(tune_weights(forced.ptrs, {}, ctx, o).step.from_cache);
  EXPECT_NE(&forced.w[0].gemv(), alt);
}

// Version 1 files (per-class lines only) are still read; a step line in one, a malformed step
// line, or another version make the file foreign: ignored, and rewritten as version 2 where the
// CPU has a GEMV to choose (on SME2, Q4_K has one: nothing is measured or written).
TEST(TuneSteps, FileVersions) {
  Context ctx(1);
  const std::string key = tune_key();
  Weights probe({WeightType::q4_k});
  const std::string gemm = probe.w[0].gemm().name, gemv = probe.w[0].gemv().name;
  const unsigned bucket = tune_bucket(64, 256);
  const std::string cls = "1 " + std::to_string(bucket) + " " + gemm + " " + gemv + " 262144 1.0 1.0\n";
  const std::string step = "step 1 0123456789abcdef " + gemm + " - 10.0 10.0\n";
  struct Case {
    std::string text;
    bool read;
  } cases[] = {
      {"qmm-tune 1\nkey " + key + "\n" + cls, true},
      {"qmm-tune 2\nkey " + key + "\n" + cls + step, true},
      {"qmm-tune 1\nkey " + key + "\n" + cls + step, false},
      {"qmm-tune 2\nkey " + key + "\n" + cls + "step 1 0123 " + gemm + " - 10.0 10.0\n", false},
      {"qmm-tune 2\nkey " + key + "\n" + cls + "step 1 0123456789abcdef " + gemm + " - -1 10.0\n", false},
      {"qmm-tune 3\nkey " + key + "\n" + cls, false},
  };
  for (const Case& c : cases) {
    const std::string dir = temp_dir();
    std::ofstream(dir + "/tune.txt") << c.text;
    Weights ws({WeightType::q4_k});
    TuneOptions o;
    o.cache_dir = dir;
    o.timer = [](const PackedWeights&, const DecodePlan&) { return 1e-3; };
    const TuneReport r = tune_weights(ws.ptrs, {}, ctx, o);
    EXPECT_EQ(r.classes[0].from_cache, c.read) << c.text;
    if (!c.read && alternative(WeightType::q4_k)) {  // (with one GEMV nothing is measured, nothing written)
      EXPECT_EQ(read_text(dir + "/tune.txt").rfind("qmm-tune 2\nkey " + key + "\n", 0), 0u) << c.text;
    }
  }
}

}  // namespace
}  // namespace qmm
