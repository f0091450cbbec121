// The whole-step pass (tune.h: tune_steps): the per-class plans against GEMV overrides per
// packed layout, timed as real decode steps, paired and alternated like the per-class pass.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/cpu.h"
#include "core/error.h"
#include "kernels/kernel_list.h"
#include "matmul/select.h"
#include "matmul/tune_internal.h"

namespace qmm {
namespace tune_detail {
namespace {

std::string overrides_name(const std::vector<StepOverride>& o) {
  if (o.empty()) return "the per-class plans";
  std::string s;
  for (const StepOverride& x : o) s += (s.empty() ? "" : " + ") + std::string(type_name(x.gemm->type)) + " GEMV " + short_name(*x.gemv);
  return s;
}

// Every weight packed for an override's GEMM decodes with its GEMV (its chunk kept); the others
// with their `base` plan.
void apply(std::span<PackedWeights* const> weights, const std::vector<DecodePlan>& base, const std::vector<StepOverride>& o) {
  for (size_t i = 0; i < weights.size(); ++i) {
    DecodePlan p = base[i];
    for (const StepOverride& x : o) {
      if (&weights[i]->gemm() == x.gemm) p.gemv = x.gemv, p.measured = true;
    }
    weights[i]->set_decode_plan(p);
  }
}

std::vector<DecodePlan> plans_of(std::span<PackedWeights* const> weights) {
  std::vector<DecodePlan> base;
  for (const PackedWeights* w : weights) base.push_back(w->decode_plan());
  return base;
}

std::string step_prefix(int threads, const std::string& model) { return "step " + std::to_string(threads) + " " + model + " "; }

}  // namespace

StepTune apply_cached_steps(std::span<PackedWeights* const> weights, const KernelFilter& filter, int threads,
                            const CacheFile& cache) {
  StepTune st;
  if (cache.steps.empty()) return st;
  st.model = model_signature(weights);
  const std::string prefix = step_prefix(threads, st.model);
  for (auto it = cache.steps.lower_bound(prefix); it != cache.steps.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const StepEntry& e = it->second;
    const Ukernel* gemm = find_kernel(e.gemm);
    if (!gemm) continue;
    st.from_cache = true;
    st.gemms.push_back(gemm);
    st.default_seconds = e.default_us * 1e-6, st.chosen_seconds = e.chosen_us * 1e-6;
    const Ukernel* gemv = e.gemv == "-" ? nullptr : find_kernel(e.gemv);
    const std::vector<const Ukernel*> ok = gemv_candidates(*gemm, filter, cpu_info());
    if (gemv && std::find(ok.begin(), ok.end(), gemv) != ok.end()) st.chosen.push_back({gemm, gemv});
  }
  if (!st.chosen.empty()) apply(weights, plans_of(weights), st.chosen);
  return st;
}

std::vector<std::string> step_summary(const StepTune& s) {
  if (!s.from_cache && (!s.measured || s.candidates.size() < 2)) return {};
  char buf[512];
  std::snprintf(buf, sizeof buf, "whole decode step: %s (%s; %.3f ms -> %.3f ms a step)", overrides_name(s.chosen).c_str(),
                s.from_cache ? "measured earlier by qmm tune, from the cache" : "measured now", s.default_seconds * 1e3,
                s.chosen_seconds * 1e3);
  return {buf};
}

std::string step_table(const StepTune& s) {
  char buf[512];
  if (s.from_cache) return "\nwhole decode steps: from the cache: " + step_summary(s)[0] + "\n";
  if (!s.measured) return "";
  if (s.candidates.size() < 2) return "\nwhole decode steps: nothing to choose (one GEMV per packed layout)\n";
  std::snprintf(buf, sizeof buf,
                "\nwhole decode steps: %zu candidates, %d rounds of %zu steps, %.2f s; noise %.1f%% (the per-class plans' two "
                "fastest runs)%s\n  the paired ratio over the steps and its 99%% bound decide\n",
                s.candidates.size(), s.rounds, s.steps, s.seconds, 100 * s.noise,
                s.too_busy ? ": too busy to measure in time, the per-class plans kept, nothing cached"
                : s.noise > kTuneMaxNoise ? ": too noisy to choose, the per-class plans kept"
                                          : "");
  std::string out = buf;
  for (size_t k = 0; k < s.candidates.size(); ++k) {
    const StepCandidate& c = s.candidates[k];
    const bool chosen = c.overrides.size() == s.chosen.size() &&
                        std::equal(c.overrides.begin(), c.overrides.end(), s.chosen.begin(), [](const StepOverride& a, const StepOverride& b) {
                          return a.gemm == b.gemm && a.gemv == b.gemv;
                        });
    char paired[64] = "  (default)";
    if (k > 0) {
      // (snprintf, not std::to_string(double): its template would be exported from libqmm.so)
      char bound[32] = "none";
      if (std::isfinite(c.ratio_bound)) std::snprintf(bound, sizeof bound, "%.3fx", c.ratio_bound);
      std::snprintf(paired, sizeof paired, "  paired %.3fx, 99%% bound %s", c.ratio, bound);
    }
    const double ms = c.runs.empty() || s.steps == 0 ? 0 : median(c.runs) / static_cast<double>(s.steps) * 1e3;
    std::snprintf(buf, sizeof buf, "  %s %-60s %9.3f ms a step%s\n", chosen ? "*" : " ", overrides_name(c.overrides).c_str(),
                  ms, paired);
    out += buf;
  }
  return out;
}

std::vector<std::string> describe_steps(const CacheFile& cache) {
  std::vector<std::string> out;
  for (const auto& [id, e] : cache.steps) {
    const Ukernel* gemm = find_kernel(e.gemm);
    const Ukernel* gemv = e.gemv == "-" ? nullptr : find_kernel(e.gemv);
    if (!gemm || (!gemv && e.gemv != "-")) continue;
    char buf[512];
    std::snprintf(buf, sizeof buf, "%d thread%s, model %s, %-6s whole decode step: GEMV %s (%.3f ms -> %.3f ms a step)",
                  e.threads, e.threads == 1 ? " " : "s", e.model.c_str(), type_name(gemm->type),
                  gemv ? short_name(*gemv).c_str() : "of the per-class choice", e.default_us * 1e-3, e.chosen_us * 1e-3);
    out.push_back(buf);
  }
  return out;
}

}  // namespace tune_detail

using namespace tune_detail;

void tune_steps(std::span<PackedWeights* const> weights, const KernelFilter& filter, TuneReport& rep,
                const StepTuneOptions& opt, const std::function<std::vector<double>()>& steps) {
  const double t_start = now();
  StepTune& st = rep.step;
  st = StepTune{};
  st.measured = true;
  st.model = model_signature(weights);
  const std::vector<DecodePlan> base = plans_of(weights);
  // The GEMMs in model order, and the GEMVs over each one's layout that are not already every
  // one of its weights' plan: one candidate each.
  std::vector<const Ukernel*> gemms;
  for (const PackedWeights* w : weights) {
    if (std::find(gemms.begin(), gemms.end(), &w->gemm()) == gemms.end()) gemms.push_back(&w->gemm());
  }
  // Whether every weight of the override's layout already decodes with its GEMV.
  auto already = [&](const StepOverride& o) {
    for (size_t i = 0; i < weights.size(); ++i) {
      if (&weights[i]->gemm() == o.gemm && base[i].gemv != o.gemv) return false;
    }
    return true;
  };
  st.candidates.emplace_back();
  std::vector<StepOverride> all;  // every layout's every GEMV (for the joint candidates)
  for (const Ukernel* g : gemms) {
    bool any = false;
    for (const Ukernel* v : gemv_candidates(*g, filter, cpu_info())) {
      all.push_back({g, v});
      if (already({g, v})) continue;
      st.candidates.push_back({{{g, v}}, {}});
      any = true;
    }
    if (any) st.gemms.push_back(g);
  }
  // One variant for every layout at once (such as ymm for Q4_K and Q6_K together: each GEMV's
  // ISA and technique, short_name), where that changes the plans of two layouts or more.
  std::vector<std::string> variants;
  for (const StepOverride& o : all) {
    if (std::find(variants.begin(), variants.end(), short_name(*o.gemv)) == variants.end()) variants.push_back(short_name(*o.gemv));
  }
  for (const std::string& name : variants) {
    StepCandidate joint;
    size_t changes = 0;
    for (const StepOverride& o : all) {
      if (short_name(*o.gemv) != name || std::find(st.gemms.begin(), st.gemms.end(), o.gemm) == st.gemms.end()) continue;
      joint.overrides.push_back(o);
      changes += !already(o);
    }
    if (changes >= 2) st.candidates.push_back(std::move(joint));
  }
  const size_t count = st.candidates.size();
  if (count == 1) return (void)(st.seconds = now() - t_start);

  // Warm-up, untimed: each candidate's first steps (pages, caches, the pool's threads).
  for (const StepCandidate& c : st.candidates) apply(weights, base, c.overrides), steps();
  std::vector<std::vector<double>> round_times;  // [round][step * count + candidate]
  const double t0 = now();
  const int max_rounds = std::clamp(opt.rounds, kTuneMinRounds, kTuneMaxRounds);
  for (int r = 0; r < max_rounds; ++r) {
    if (r >= kTuneMinRounds && r % 2 == 0 && now() - t0 > opt.budget_seconds) break;
    for (size_t j = 0; j < count; ++j) {
      const size_t k = tune_pass_candidate(j, static_cast<size_t>(r), count);
      apply(weights, base, st.candidates[k].overrides);
      const std::vector<double> t = steps();
      check_arg(!t.empty() && (st.steps == 0 || t.size() == st.steps), "tune_steps: the step timer must time the same steps each call");
      st.steps = t.size();
      if (round_times.size() == static_cast<size_t>(r)) round_times.emplace_back(st.steps * count, 0.0);
      for (size_t s = 0; s < t.size(); ++s) round_times.back()[s * count + k] = t[s];
      st.candidates[k].runs.push_back(std::accumulate(t.begin(), t.end(), 0.0));
    }
    st.rounds = r + 1;
    if (r == 0 && kTuneMinRounds * (now() - t0) > 1.25 * opt.budget_seconds) {
      st.too_busy = true;
      break;
    }
  }
  std::vector<double> d = st.candidates[0].runs;
  std::sort(d.begin(), d.end());
  st.noise = d.size() >= 2 && d[0] > 0 && !st.too_busy ? (d[1] - d[0]) / d[0] : 1.0;
  std::vector<size_t> members(st.steps);
  std::iota(members.begin(), members.end(), size_t{0});
  size_t best = 0;
  for (size_t k = 1; k < count; ++k) {
    StepCandidate& c = st.candidates[k];
    paired_ratio(round_times, members, count, k, &c.ratio, &c.ratio_bound);
    if (beats_default(c.ratio, c.ratio_bound) && (best == 0 || c.ratio < st.candidates[best].ratio)) best = k;
  }
  if (st.noise > kTuneMaxNoise || st.too_busy) best = 0;
  st.chosen = st.candidates[best].overrides;
  const double n = static_cast<double>(st.steps);
  st.default_seconds = median(st.candidates[0].runs) / n;
  st.chosen_seconds = median(st.candidates[best].runs) / n;
  apply(weights, base, st.chosen);

  // Persist (not under a kernel filter, not when too busy): this model's lines at this thread
  // count are replaced, one per GEMM that had a candidate ("-": the per-class choice kept).
  const bool filtered = !filter.allow.empty() || !filter.deny.empty();
  const std::string dir = opt.cache_dir.empty() ? tune_cache_dir() : opt.cache_dir;
  if (opt.persist && !dir.empty() && !filtered && !st.too_busy) {
    const std::string file = dir + "/tune.txt", key = tune_key();
    bool ok = false;
    CacheFile cache = read_cache(file, key, &ok);
    if (!ok) cache = CacheFile{};
    const std::string prefix = step_prefix(rep.threads, st.model);
    for (auto it = cache.steps.lower_bound(prefix); it != cache.steps.end() && it->first.rfind(prefix, 0) == 0;) it = cache.steps.erase(it);
    for (const Ukernel* g : st.gemms) {
      StepEntry e{rep.threads, st.model, g->name, "-", st.default_seconds * 1e6, st.chosen_seconds * 1e6};
      for (const StepOverride& x : st.chosen) {
        if (x.gemm == g) e.gemv = x.gemv->name;
      }
      cache.steps[e.id()] = e;
    }
    std::string why;
    if (!write_cache(dir, file, cache_text(cache, key), &why)) {
      warn_once(opt.warn, "cannot write the tuning cache " + file + " (" + why + "); the whole-step choice holds for this run only");
    }
  }
  st.seconds = now() - t_start;
}

}  // namespace qmm
