// What the per-class tuner (tune.cpp) and the whole-step pass (tune_steps.cpp) share: the
// tuning file, its hostile-input reader and atomic writer, and the paired statistics.
#pragma once
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "matmul/tune.h"

namespace qmm::tune_detail {

constexpr double kTuneMaxNoise = 0.10;  // a measurement noisier than this keeps the default plan

double now();

// One per-class choice: "threads bucket gemm gemv chunk_bytes default_us chosen_us".
struct Entry {
  int threads = 0;
  unsigned bucket = 0;
  std::string gemm, gemv;
  size_t chunk = 0;
  double default_us = 0, chosen_us = 0;
  std::string id() const { return std::to_string(threads) + " " + std::to_string(bucket) + " " + gemm; }
};

// One whole-step choice (version 2 files): "step threads model gemm gemv default_us chosen_us":
// for the model of signature `model` (model_signature) at `threads`, every weight packed for
// `gemm` decodes with `gemv` ("-": the per-class choice was kept); the times are one decode step.
struct StepEntry {
  int threads = 0;
  std::string model, gemm, gemv;
  double default_us = 0, chosen_us = 0;
  std::string id() const { return "step " + std::to_string(threads) + " " + model + " " + gemm; }
};

struct CacheFile {
  std::map<std::string, Entry> classes;
  std::map<std::string, StepEntry> steps;
};

// The entries of `path` when it is a well-formed file of `key` (version 1: per-class lines only;
// version 2: step lines too); `ok = false` and nothing when it is absent, unreadable, malformed,
// too large, of another version or another CPU's / build's.
CacheFile read_cache(const std::string& path, const std::string& key, bool* ok);
// The text of a version 2 file.
std::string cache_text(const CacheFile& c, const std::string& key);
// Temporary file + rename: readers see the old file or the new one, never a part.
bool write_cache(const std::string& dir, const std::string& path, const std::string& text, std::string* why);
// One warning per process (opt-less: stderr).
void warn_once(const std::function<void(const std::string&)>& warn, const std::string& msg);

// Candidate k's time as a ratio of candidate 0's, paired (tune.cpp explains): round_times[r]
// holds [member * stride + candidate].
void paired_ratio(const std::vector<std::vector<double>>& round_times, const std::vector<size_t>& members, size_t stride,
                  size_t k, double* ratio, double* bound);
double median(std::vector<double> v);
// The decision, one rule for the per-class pass, its pooled evidence and the whole-step pass: a
// candidate wins when it is at least kTuneMinGain faster, paired, and faster at the 99 % bound.
inline bool beats_default(double ratio, double bound) { return bound < 1 && ratio <= 1 - kTuneMinGain; }

// What identifies a model's decode for the whole-step entries: a hash of every weight's GEMM
// and shape in order (16 hex digits), so copies of a file share it and another quant mix does not.
std::string model_signature(std::span<PackedWeights* const> weights);

// The cached whole-step choice of this model at `threads`, set over the per-class plans (a GEMV
// the filter excludes or that is unknown is skipped).
StepTune apply_cached_steps(std::span<PackedWeights* const> weights, const KernelFilter& filter, int threads,
                            const CacheFile& cache);
std::vector<std::string> step_summary(const StepTune& s);  // TuneReport::summary's step lines
std::string step_table(const StepTune& s);                 // TuneReport::table's step part
std::vector<std::string> describe_steps(const CacheFile& cache);  // qmm info's step lines

std::string bucket_name(unsigned b);
std::string chunk_name(size_t bytes);
std::string short_name(const Ukernel& u);  // the ISA and technique (the tail after the tile)

}  // namespace qmm::tune_detail
