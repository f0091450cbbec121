#include "matmul/tune.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/cpu.h"
#include "kernels/kernel_list.h"
#include "matmul/tune_internal.h"
#include "qmm/qmm.h"

namespace qmm {
namespace {

using namespace tune_detail;

// The chunk sizes tried with several threads (the default first).
constexpr size_t kChunks[] = {DecodePlan::kDefaultChunkBytes, size_t{64} << 10, size_t{1} << 20};

// Activations to time the GEMVs with: k values in [-1, 1), the same every time. (Not
// core/random.h's std::mt19937_64, whose template code libqmm.so would export.)
std::vector<float> activations(size_t k) {
  std::vector<float> v(k);
  uint32_t x = 0x9E3779B9u;
  for (float& f : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;  // xorshift32
    f = static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  return v;
}

// Runs and times one decode GEMV of w under `plan`.
struct Runner {
  Context& ctx;
  std::vector<float> x, y;
  double operator()(PackedWeights& w, const DecodePlan& plan) {
    w.set_decode_plan(plan);
    const double t0 = now();
    matmul(w, 1, x.data(), w.k() * sizeof(float), y.data(), w.n() * sizeof(float), -INFINITY, INFINITY, ctx);
    return now() - t0;
  }
};

// Whether two plans decode alike (the GEMV and the chunk; `measured` says only how one was chosen).
bool same_plan(const DecodePlan& a, const DecodePlan& b) { return a.gemv == b.gemv && a.chunk_bytes == b.chunk_bytes; }

// The classes of one GEMM (one packed layout, several n·k buckets) have the same candidates,
// and a GEMV faster on one bucket's stream is seldom slower on the next: where a class's own
// pairs of rounds leave its choice at the default (too few weights or too few rounds for the
// 99 % bound), the evidence of every weight of its GEMM, pooled, decides: its winner, by the
// same rule, replaces the default unless the class's own paired ratio says it was slower there.
void adopt_pooled_winners(TuneReport& rep, const std::vector<size_t>& todo, const std::vector<size_t>& class_of,
                          const std::vector<std::vector<double>>& round_times, size_t stride) {
  std::vector<const Ukernel*> gemms;
  for (size_t c : todo) {
    if (std::find(gemms.begin(), gemms.end(), rep.classes[c].gemm) == gemms.end()) gemms.push_back(rep.classes[c].gemm);
  }
  for (const Ukernel* gemm : gemms) {
    std::vector<size_t> classes;
    for (size_t c : todo) {
      if (rep.classes[c].gemm == gemm) classes.push_back(c);
    }
    if (classes.size() < 2) continue;
    // The same candidate list in every class (built from the GEMM and the thread count alone).
    const std::vector<TuneCandidate>& first = rep.classes[classes[0]].candidates;
    bool same = true;
    for (size_t c : classes) {
      const std::vector<TuneCandidate>& o = rep.classes[c].candidates;
      same = same && o.size() == first.size() &&
             std::equal(o.begin(), o.end(), first.begin(),
                        [](const TuneCandidate& a, const TuneCandidate& b) { return same_plan(a.plan, b.plan); });
    }
    if (!same) continue;
    std::vector<size_t> members;
    for (size_t i = 0; i < class_of.size(); ++i) {
      if (std::find(classes.begin(), classes.end(), class_of[i]) != classes.end()) members.push_back(i);
    }
    size_t best = 0;
    double best_ratio = 1, best_bound = 1;
    for (size_t k = 1; k < first.size(); ++k) {
      double ratio = 1, bound = INFINITY;
      paired_ratio(round_times, members, stride, k, &ratio, &bound);
      if (beats_default(ratio, bound) && (best == 0 || ratio < best_ratio)) best = k, best_ratio = ratio, best_bound = bound;
    }
    if (best == 0) continue;
    for (size_t c : classes) {
      TuneClass& tc = rep.classes[c];
      if (!same_plan(tc.chosen, tc.candidates[0].plan) || tc.candidates[best].ratio >= 1) continue;
      tc.chosen = tc.candidates[best].plan;
      tc.chosen_seconds = tc.candidates[best].seconds;
      tc.pooled = true;
      tc.pooled_ratio = best_ratio;
      tc.pooled_bound = best_bound;
    }
  }
}

}  // namespace

namespace tune_detail {

std::string bucket_name(unsigned b) { return "n*k 2^" + std::to_string(b) + "..2^" + std::to_string(b + 2); }

std::string chunk_name(size_t bytes) {
  return bytes >= (size_t{1} << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

// The kernel's short name: the ISA and technique (the tail after the tile).
std::string short_name(const Ukernel& u) {
  const std::string n = u.name;
  const std::string isa = isa_name(u.isa);
  const size_t at = n.find("_" + (u.isa == Isa::avx512vnni ? std::string("avx512") : isa));
  return at == std::string::npos ? n : n.substr(at + 1);
}

}  // namespace tune_detail

std::string tune_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/qmm";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/qmm";
  return "";
}

std::string& build_id_override() {
  static std::string s;
  return s;
}

std::string build_identity() {
  static const std::string id = [] {
    struct stat st {};
    std::string s = std::string("qmm ") + qmm_version();
    if (::stat("/proc/self/exe", &st) == 0) {
      s += " exe " + std::to_string(st.st_size) + "-" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
    }
    return s;
  }();
  return build_id_override().empty() ? id : build_id_override();
}

std::string tune_key() {
  const CpuInfo& cpu = cpu_info();
  std::string brand = cpu.brand.empty() ? "unknown" : cpu.brand;
  for (char& c : brand) c = c == '\n' || c == '\r' ? ' ' : c;
  return build_identity() + " | " + cpu.arch + " | " + brand + " | " + feature_names(cpu.features) + " | svl " +
         std::to_string(cpu.svl_bytes);
}

bool tune_enabled_by_env() {
  const char* v = std::getenv("QMM_TUNE");
  if (!v) return true;
  const std::string s = v;
  return !(s == "0" || s == "off" || s == "no" || s == "false");
}

unsigned tune_bucket(size_t n, size_t k) {
  const size_t nk = n * k;
  unsigned b = 0;
  while (b < 62 && (size_t{1} << (b + 1)) <= nk) ++b;
  return b & ~1u;
}

size_t tune_pass_candidate(size_t j, size_t r, size_t count) {
  const size_t q = r / 2;
  return r % 2 == 0 ? (j + q) % count : (count - 1 - j + q) % count;
}

TuneReport tune_weights(std::span<PackedWeights* const> weights, const KernelFilter& filter, Context& ctx,
                        const TuneOptions& opt) {
  TuneReport rep;
  rep.threads = ctx.threads();
  const double t_start = now();
  // Classes in order of first appearance; each weight's class.
  std::vector<size_t> class_of(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) {
    const PackedWeights& w = *weights[i];
    const unsigned b = tune_bucket(w.n(), w.k());
    size_t c = 0;
    while (c < rep.classes.size() && !(rep.classes[c].gemm == &w.gemm() && rep.classes[c].bucket == b)) ++c;
    if (c == rep.classes.size()) {
      TuneClass tc;
      tc.type = w.type();
      tc.gemm = &w.gemm();
      tc.bucket = b;
      tc.chosen = {&w.gemv(), DecodePlan::kDefaultChunkBytes, false};
      rep.classes.push_back(tc);
    }
    class_of[i] = c;
    rep.classes[c].weights++;
    rep.classes[c].bytes += w.bytes();
  }
  // Candidates: the default (select_kernels' GEMV, the default chunk) first, then each other
  // chunk size with that GEMV and each other permitted GEMV reading the class's packed RHS with
  // the default chunk (the two are independent: a GEMV's stream, a thread's share of it). Not
  // their product: every extra candidate is one more chance that noise passes the 99 % bound
  // (Tune.NoiseOfTwoPercentIsNotAWin), and one more to time on a first load.
  const bool filtered = !filter.allow.empty() || !filter.deny.empty();
  for (TuneClass& tc : rep.classes) {
    std::vector<const Ukernel*> gemvs = gemv_candidates(*tc.gemm, filter, cpu_info());
    // (a rotation, not std::stable_partition: libstdc++ 12's uses the deprecated get_temporary_buffer)
    const auto chosen = std::find(gemvs.begin(), gemvs.end(), tc.chosen.gemv);
    if (chosen != gemvs.end()) std::rotate(gemvs.begin(), chosen, chosen + 1);
    if (gemvs.empty() || gemvs[0] != tc.chosen.gemv) gemvs.insert(gemvs.begin(), tc.chosen.gemv);
    for (size_t chunk : kChunks) {
      if (rep.threads == 1 && chunk != DecodePlan::kDefaultChunkBytes) continue;  // one thread: no chunks
      tc.candidates.push_back({{gemvs[0], chunk, true}, 0, {}});
    }
    for (size_t i = 1; i < gemvs.size(); ++i) tc.candidates.push_back({{gemvs[i], DecodePlan::kDefaultChunkBytes, true}, 0, {}});
  }

  // The cache: classes it has (for this CPU, build and thread count) are taken from it.
  const std::string dir = opt.cache_dir.empty() ? tune_cache_dir() : opt.cache_dir;
  const std::string key = tune_key();
  bool cache_ok = false;
  CacheFile cache;
  if (opt.persist && !dir.empty()) {
    rep.file = dir + "/tune.txt";
    cache = read_cache(rep.file, key, &cache_ok);
  }
  std::vector<size_t> todo;
  for (size_t c = 0; c < rep.classes.size(); ++c) {
    TuneClass& tc = rep.classes[c];
    Entry probe;
    probe.threads = rep.threads;
    probe.bucket = tc.bucket;
    probe.gemm = tc.gemm->name;
    const auto it = opt.force ? cache.classes.end() : cache.classes.find(probe.id());
    if (it != cache.classes.end()) {
      const Ukernel* g = find_kernel(it->second.gemv);
      const auto cand = std::find_if(tc.candidates.begin(), tc.candidates.end(), [&](const TuneCandidate& k) {
        return k.plan.gemv == g && k.plan.chunk_bytes == it->second.chunk;
      });
      if (cand != tc.candidates.end()) {  // (a kernel the filter excludes is no candidate)
        tc.chosen = cand->plan;
        tc.default_seconds = it->second.default_us * 1e-6;
        tc.chosen_seconds = it->second.chosen_us * 1e-6;
        tc.from_cache = true;
        tc.candidates.clear();
        continue;
      }
    }
    if (tc.candidates.size() == 1) {  // nothing to choose between
      tc.chosen = tc.candidates[0].plan;
      tc.chosen.measured = false;
      continue;
    }
    if (opt.measure) todo.push_back(c);
  }

  // Measuring: each round is one pass over the weights in model order per candidate (as a
  // decode step reads them, so that they come from DRAM as in a decode step); pass j of round r
  // runs tune_pass_candidate(j, r, count) of every class still to tune, so each pair of rounds runs
  // every two candidates once in each order. Each candidate's time (the table and the cache) is
  // the sum over its class's weights of each weight's fastest run; its choice is paired
  // (paired_ratio).
  if (!todo.empty()) {
    size_t max_cands = 0;
    for (size_t c : todo) max_cands = std::max(max_cands, rep.classes[c].candidates.size());
    size_t max_k = 0, max_n = 0;
    for (PackedWeights* w : weights) max_k = std::max(max_k, w->k()), max_n = std::max(max_n, w->n());
    Runner run{ctx, activations(max_k), std::vector<float>(max_n)};
    std::vector<char> measured(rep.classes.size(), 0);
    for (size_t c : todo) measured[c] = 1;
    std::vector<double> fastest(weights.size() * max_cands, 0.0);  // [weight][candidate]
    std::vector<std::vector<double>> round_times;                  // [round][weight][candidate]
    std::vector<std::vector<double>> default_passes(rep.classes.size());  // the default's pass per round
    std::vector<double> pass(rep.classes.size());
    // Warm-up, untimed: the first touch of every weight (a mapped pack cache faults its pages
    // in) must not count against whichever candidate runs first.
    if (!opt.timer) {
      for (size_t i = 0; i < weights.size(); ++i) {
        if (measured[class_of[i]]) run(*weights[i], rep.classes[class_of[i]].candidates[0].plan);
      }
    }
    const double t0 = now();
    const int max_rounds = std::clamp(opt.rounds, kTuneMinRounds, kTuneMaxRounds);
    for (int r = 0; r < max_rounds; ++r) {
      // Whole pairs of rounds only (each order once), at least kTuneMinRounds, within the budget.
      if (r >= kTuneMinRounds && r % 2 == 0 && now() - t0 > opt.budget_seconds) break;
      round_times.emplace_back(weights.size() * max_cands, 0.0);
      for (size_t j = 0; j < max_cands; ++j) {
        std::fill(pass.begin(), pass.end(), 0.0);
        for (size_t i = 0; i < weights.size(); ++i) {
          TuneClass& tc = rep.classes[class_of[i]];
          if (!measured[class_of[i]] || j >= tc.candidates.size()) continue;
          const size_t cand = tune_pass_candidate(j, static_cast<size_t>(r), tc.candidates.size());
          const DecodePlan& plan = tc.candidates[cand].plan;
          const double t = opt.timer ? (weights[i]->set_decode_plan(plan), opt.timer(*weights[i], plan))
                                     : run(*weights[i], plan);
          double& f = fastest[i * max_cands + cand];
          f = f == 0 ? t : std::min(f, t);
          round_times.back()[i * max_cands + cand] = t;
          pass[class_of[i]] += t;
        }
        for (size_t c : todo) {
          TuneClass& tc = rep.classes[c];
          if (j >= tc.candidates.size()) continue;
          const size_t cand = tune_pass_candidate(j, static_cast<size_t>(r), tc.candidates.size());
          tc.candidates[cand].passes.push_back(pass[c]);
          if (cand == 0) default_passes[c].push_back(pass[c]);
        }
      }
      rep.rounds = r + 1;
      // The minimum of rounds would take too long (a busy machine): keep the defaults, cache nothing.
      if (r == 0 && kTuneMinRounds * (now() - t0) > 1.25 * opt.budget_seconds) {
        rep.too_busy = true;
        break;
      }
    }
    for (size_t i = 0; i < weights.size(); ++i) {
      TuneClass& tc = rep.classes[class_of[i]];
      if (!measured[class_of[i]]) continue;
      for (size_t k = 0; k < tc.candidates.size(); ++k) tc.candidates[k].seconds += fastest[i * max_cands + k];
    }
    for (size_t c : todo) {
      TuneClass& tc = rep.classes[c];
      std::vector<double>& p = default_passes[c];
      std::sort(p.begin(), p.end());
      tc.noise = p.size() >= 2 && p[0] > 0 && !rep.too_busy ? (p[1] - p[0]) / p[0] : 1.0;
      std::vector<size_t> members;
      for (size_t i = 0; i < weights.size(); ++i) {
        if (class_of[i] == c) members.push_back(i);
      }
      size_t best = 0;
      for (size_t k = 1; k < tc.candidates.size(); ++k) {
        TuneCandidate& cand = tc.candidates[k];
        paired_ratio(round_times, members, max_cands, k, &cand.ratio, &cand.ratio_bound);
        if (beats_default(cand.ratio, cand.ratio_bound) && (best == 0 || cand.ratio < tc.candidates[best].ratio)) best = k;
      }
      tc.default_seconds = tc.candidates[0].seconds;
      tc.chosen = tc.candidates[best].plan;
      tc.chosen_seconds = tc.candidates[best].seconds;
    }
    adopt_pooled_winners(rep, todo, class_of, round_times, max_cands);
    for (size_t c : todo) {
      TuneClass& tc = rep.classes[c];
      // Keep the default when the measurement is too noisy to say (qmm tune measures again on demand).
      if (tc.noise > kTuneMaxNoise || rep.too_busy) {
        tc.chosen = tc.candidates[0].plan;
        tc.chosen_seconds = tc.candidates[0].seconds;
        tc.pooled = false;
      }
    }
  }
  for (size_t i = 0; i < weights.size(); ++i) weights[i]->set_decode_plan(rep.classes[class_of[i]].chosen);
  // A whole-step choice for this model (qmm tune's step pass) goes over the per-class plans;
  // not when the classes are measured again for a new step pass (force).
  if (!opt.force && cache_ok) rep.step = apply_cached_steps(weights, filter, rep.threads, cache);

  // Persist what was measured (not under a kernel filter: that is not this machine's choice).
  if (!todo.empty() && !rep.file.empty() && !filtered && !rep.too_busy) {
    if (!cache_ok) cache = CacheFile{};  // a foreign / corrupt file is replaced
    for (size_t c : todo) {
      const TuneClass& tc = rep.classes[c];
      Entry e{rep.threads, tc.bucket, tc.gemm->name, tc.chosen.gemv->name, tc.chosen.chunk_bytes,
              tc.default_seconds * 1e6, tc.chosen_seconds * 1e6};
      cache.classes[e.id()] = e;
    }
    std::string why;
    if (!write_cache(dir, rep.file, cache_text(cache, key), &why)) {
      warn_once(opt.warn, "cannot write the tuning cache " + rep.file + " (" + why + "); the kernels were tuned for this run only");
    }
  }
  rep.seconds = now() - t_start;
  return rep;
}

std::vector<std::string> describe_tune_cache(const std::string& dir_in) {
  const std::string dir = dir_in.empty() ? tune_cache_dir() : dir_in;
  if (dir.empty()) return {"no cache directory (neither XDG_CACHE_HOME nor HOME is set)"};
  const std::string file = dir + "/tune.txt";
  bool ok = false;
  const CacheFile cache = read_cache(file, tune_key(), &ok);
  if (!ok) return {file + ": nothing for this CPU and build yet (the next model load measures)"};
  std::vector<std::string> out = {file + ": measured on this CPU and build"};
  for (const auto& [id, e] : cache.classes) {
    const Ukernel* gemm = find_kernel(e.gemm);
    const Ukernel* gemv = find_kernel(e.gemv);
    if (!gemm || !gemv) continue;
    char buf[512];
    std::snprintf(buf, sizeof buf, "%d thread%s, %-6s %-16s GEMV %s, chunk %s (%.1f us -> %.1f us per pass)", e.threads,
                  e.threads == 1 ? " " : "s", type_name(gemm->type), bucket_name(e.bucket).c_str(),
                  short_name(*gemv).c_str(), chunk_name(e.chunk).c_str(), e.default_us, e.chosen_us);
    out.push_back(buf);
  }
  for (std::string& line : describe_steps(cache)) out.push_back(std::move(line));
  return out;
}

std::vector<std::string> TuneReport::summary() const {
  std::vector<std::string> out;
  for (const TuneClass& tc : classes) {
    char buf[512];
    const double gain = tc.default_seconds > 0 ? 100.0 * (1 - tc.chosen_seconds / tc.default_seconds) : 0;
    std::snprintf(buf, sizeof buf, "%-6s %-16s %3zu weights: GEMV %s, chunk %s (%s, %.1f%% faster than the default)",
                  type_name(tc.type), bucket_name(tc.bucket).c_str(), tc.weights, short_name(*tc.chosen.gemv).c_str(),
                  chunk_name(tc.chosen.chunk_bytes).c_str(),
                  tc.from_cache ? "measured earlier, from the cache"
                  : tc.pooled ? "measured now, pooled over its GEMM's classes"
                  : tc.chosen.measured ? "measured now"
                  : "the only candidate",
                  gain);
    out.push_back(buf);
    for (const StepOverride& o : step.chosen) {
      if (o.gemm == tc.gemm && o.gemv != tc.chosen.gemv) out.back() += "; the whole-step choice below replaces its GEMV";
    }
  }
  for (std::string& line : step_summary(step)) out.push_back(std::move(line));
  return out;
}

std::string TuneReport::table() const {
  std::string s;
  char buf[512];
  std::snprintf(buf, sizeof buf, "tuning: %d thread%s, %d round%s, %.2f s measuring; cache %s\n", threads,
                threads == 1 ? "" : "s", rounds, rounds == 1 ? "" : "s", seconds, file.empty() ? "(none)" : file.c_str());
  s += buf;
  if (too_busy) s += "the machine was too busy to measure in time: the defaults are kept, nothing cached\n";
  for (const TuneClass& tc : classes) {
    char pooled[160] = "";
    if (tc.pooled) {
      std::snprintf(pooled, sizeof pooled, "; its own bound too wide, chosen by its GEMM's classes pooled: paired %.3fx, 99%% bound %.3fx",
                    tc.pooled_ratio, tc.pooled_bound);
    }
    std::snprintf(buf, sizeof buf, "\n%s %s, %zu weights, %.1f MiB, GEMM %s\n", type_name(tc.type),
                  bucket_name(tc.bucket).c_str(), tc.weights, static_cast<double>(tc.bytes) / (1 << 20), tc.gemm->name);
    s += buf;
    if (!tc.from_cache && tc.candidates.size() > 1) {
      std::snprintf(buf, sizeof buf,
                    "  noise %.1f%% (the default's two fastest passes)%s\n"
                    "    GEMV / chunk: fastest runs summed, their ratio; the paired ratio and its bound decide\n",
                    100 * tc.noise,
                    tc.noise > kTuneMaxNoise ? ": too noisy to choose, the default kept"
                    : pooled);
    } else {
      buf[0] = 0;
    }
    s += buf;
    if (tc.from_cache) {
      std::snprintf(buf, sizeof buf, "  from the cache: GEMV %s, chunk %s (default %.1f us, chosen %.1f us)\n",
                    tc.chosen.gemv->name, chunk_name(tc.chosen.chunk_bytes).c_str(), tc.default_seconds * 1e6,
                    tc.chosen_seconds * 1e6);
      s += buf;
      continue;
    }
    for (size_t k = 0; k < tc.candidates.size(); ++k) {
      const TuneCandidate& c = tc.candidates[k];
      const bool chosen = same_plan(c.plan, tc.chosen);
      const double rel = tc.default_seconds > 0 ? c.seconds / tc.default_seconds : 0;
      char paired[64] = "  (default)";
      if (k > 0) {
        std::snprintf(paired, sizeof paired, "  paired %.3fx, 99%% bound %s", c.ratio,
                      std::isfinite(c.ratio_bound) ? (std::to_string(c.ratio_bound).substr(0, 5) + "x").c_str() : "none");
      }
      std::snprintf(buf, sizeof buf, "  %s %-40s chunk %-7s %10.1f us  %.3fx%s\n", chosen ? "*" : " ",
                    short_name(*c.plan.gemv).c_str(), chunk_name(c.plan.chunk_bytes).c_str(), c.seconds * 1e6, rel,
                    paired);
      s += buf;
    }
  }
  s += step_table(step);
  return s;
}

}  // namespace qmm
