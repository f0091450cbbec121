// Kernels chosen by measurement (docs/design.md §3 "Tuning"). For every class of a model's
// weights (weight type, GEMM, n·k size bucket), the decode plans that need no repack — each
// GEMV reading the GEMM's packed RHS, times the smallest column chunk a thread grabs — are
// timed on this machine with the model's thread pool, interleaved over pairs of rounds (each
// pair runs every two candidates in both orders), and a candidate replaces the default only
// when it is faster paired — per weight and round, its time over the default's — by at least
// kTuneMinGain, and faster at a one-sided 99 % confidence bound over the pairs of rounds (so a
// real 2 % difference in DRAM speed is resolved, noise is not); where a class's own evidence
// is too thin for the bound, that of every class of its GEMM, pooled, decides by the same rule. Choices persist in a small text file, tune.txt under tune_cache_dir(), keyed
// by qmm's version and build, the CPU's model name and features and the thread count, so a
// new CPU tunes on its first load and later loads reuse. The file is read as hostile input:
// anything malformed, another CPU's or another build's is ignored and rewritten. qmm tune then
// runs a whole-step pass (tune_steps, below) whose choice per model lives in the same file. A tuned plan
// changes speed only: every candidate computes each column with the same arithmetic as the
// kernel tests allow between variants.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "matmul/matmul.h"

namespace qmm {

constexpr double kTuneMinGain = 0.01;  // a candidate must be at least this much faster (paired)
constexpr int kTuneMinRounds = 4;      // two pairs of rounds: the least that gives a bound
constexpr int kTuneMaxRounds = 64;

struct TuneOptions {
  bool measure = true;      // measure the classes the cache lacks (false: cache or defaults only)
  bool force = false;       // re-measure every class (qmm tune)
  std::string cache_dir;    // "" : tune_cache_dir()
  bool persist = true;      // read and write the cache file
  double budget_seconds = 8;  // no new pair of rounds starts after this (at least kTuneMinRounds
                              // run, unless the first shows that they would take 1.25x this: then
                              // the defaults are kept)
  int rounds = 24;            // in [kTuneMinRounds, kTuneMaxRounds]; pairs of rounds decide
  // Tests: the seconds of one decode GEMV over `w` under `plan` (default: runs and times it).
  std::function<double(const PackedWeights& w, const DecodePlan& plan)> timer;
  std::function<void(const std::string&)> warn;  // one-line warnings (unwritable cache, ...)
};

struct TuneCandidate {
  DecodePlan plan;
  double seconds = 0;  // the class's weights, one decode pass: each weight's fastest run, summed
  std::vector<double> passes;  // the class's pass time in each round
  double ratio = 1;            // its time over the default's, paired (the default: 1)
  double ratio_bound = 1;      // the 99 % upper confidence bound of ratio (infinity: too few rounds)
};

struct TuneClass {
  WeightType type{};
  const Ukernel* gemm = nullptr;
  unsigned bucket = 0;      // n·k in [2^bucket, 2^(bucket+2))
  size_t weights = 0, bytes = 0;
  std::vector<TuneCandidate> candidates;  // [0] is the default; empty when read from the cache
  DecodePlan chosen;
  double default_seconds = 0, chosen_seconds = 0;
  double noise = 0;         // relative spread of the default's passes (a winner must beat it)
  bool from_cache = false;
  bool pooled = false;      // chosen by the pooled evidence of every class of its GEMM
  double pooled_ratio = 1, pooled_bound = 1;  // that evidence (its winner's paired ratio and bound)
};

// The whole-step pass (tune_decode_steps, qmm tune -m): a GEMV faster or slower by itself may
// not be so inside a decode step, where attention, norms, the activations' quantization and the
// CPU's clock (AVX-512 frequency licences) come between the GEMVs. So each candidate decodes
// real steps of the model: for one GEMM (a packed layout) of the model, every weight of it with
// another GEMV than the per-class choice (a "step override"), or every such GEMM at once; the
// per-class plans are candidate 0. Same pairs of rounds and the same decision as per class.
struct StepOverride {
  const Ukernel* gemm = nullptr;
  const Ukernel* gemv = nullptr;  // every weight packed for gemm decodes with it
};

struct StepCandidate {
  std::vector<StepOverride> overrides;  // none: the per-class plans
  std::vector<double> runs;             // seconds of its decode steps, each round (summed)
  double ratio = 1, ratio_bound = 1;    // paired over the steps, as TuneCandidate's
};

struct StepTune {
  bool measured = false, from_cache = false;
  std::string model;           // the model's signature (16 hex digits)
  std::vector<StepCandidate> candidates;  // [0]: the per-class plans; empty when from the cache
  std::vector<StepOverride> chosen;       // none: the per-class plans were kept
  std::vector<const Ukernel*> gemms;      // the GEMMs the pass chose for (the cache's lines)
  int rounds = 0;
  size_t steps = 0;            // decode steps per run
  double noise = 0;            // relative spread of candidate 0's runs
  bool too_busy = false;
  double default_seconds = 0, chosen_seconds = 0;  // one decode step
  double seconds = 0;          // the pass's time
};

struct TuneReport {
  std::vector<TuneClass> classes;
  StepTune step;          // the whole-step choice, measured or from the cache
  std::string file;       // the cache file ("" when not persisted)
  int threads = 1;
  int rounds = 0;         // rounds measured (0: everything from the cache)
  bool too_busy = false;  // one round took over a third of the budget: defaults kept, nothing cached
  double seconds = 0;     // time spent tuning (reading the cache, measuring, writing)
  std::string table() const;                 // every class, candidate and time (qmm tune)
  std::vector<std::string> summary() const;  // one line per class (--trace, qmm info)
};

// Chooses and sets the decode plan of every weight (in model order: the measuring passes run
// them in that order, as a decode step does). `filter`: the kernels that may be chosen.
TuneReport tune_weights(std::span<PackedWeights* const> weights, const KernelFilter& filter, Context& ctx,
                        const TuneOptions& opt);

struct StepTuneOptions {
  std::string cache_dir;        // "" : tune_cache_dir()
  bool persist = true;          // read and write the tuning file
  double budget_seconds = 20;   // no new pair of rounds starts after this (kTuneMinRounds at least)
  int rounds = 16;              // in [kTuneMinRounds, kTuneMaxRounds]
  std::function<void(const std::string&)> warn;
};

// The whole-step pass over weights whose per-class plans `rep` holds (tune_weights' report):
// `steps` decodes the same few tokens from the same position with the plans set now and returns
// each step's seconds (the same count every call). Sets the winner's plans, records it in
// rep.step and (not under a kernel filter, not too busy) writes it to the tuning file, where later
// tune_weights calls of the same model and thread count find it.
void tune_steps(std::span<PackedWeights* const> weights, const KernelFilter& filter, TuneReport& rep,
                const StepTuneOptions& opt, const std::function<std::vector<double>()>& steps);

// $XDG_CACHE_HOME/qmm, else $HOME/.cache/qmm ("" when neither is set).
std::string tune_cache_dir();
// qmm's version and this build (the executable's size and time): caches of another build are stale.
std::string build_identity();
std::string& build_id_override();  // tests: when set, build_identity() returns it
// The key of this CPU and build: version, build, CPU model name, features, SVL.
std::string tune_key();
// qmm info: one line per choice the cache holds for this CPU and build, or a line saying why none.
std::vector<std::string> describe_tune_cache(const std::string& dir = "");
// False when QMM_TUNE is "0", "off", "no" or "false".
bool tune_enabled_by_env();
// The candidate (of `count`) that pass j of round r runs: round 2q runs them in the order q,
// q + 1, ... (mod count), round 2q + 1 in the reverse order, so that within each pair of rounds
// every candidate runs once before and once after every other (an effect of the order, such as
// the previous pass's data in the cache, cancels in the pair).
size_t tune_pass_candidate(size_t j, size_t r, size_t count);
// n·k's bucket (an even power of two).
unsigned tune_bucket(size_t n, size_t k);

}  // namespace qmm
