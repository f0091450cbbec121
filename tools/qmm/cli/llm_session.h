// What `qmm run`, `qmm chat` and `qmm bench serve` share: the model flags (-m, -t, --kernels,
// --disable, --convert, --trace), the sampling flags of llama-cli, loading a model with its
// tokenizer, and the model/load lines of the statistics.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "args.h"
#include "llm/model.h"
#include "llm/sampler.h"
#include "text/tokenizer.h"

namespace qmm::cli {

// The --convert spelling (a type the kernels take: q4_0, ..., qc8, qc4) as a weight type.
WeightType convert_type(const std::string& name);

struct ModelFlags {
  std::string path, kernels, disable, convert;
  size_t threads = 0;
  bool trace = false;
  bool no_tune = false;  // --no-tune (or QMM_TUNE=0): the default decode plans, nothing measured
  bool retune = false;   // qmm tune: measure again whatever the cache holds
  std::string pack_cache;      // --pack-cache DIR ("" : the default directory)
  bool no_pack_cache = false;  // --no-pack-cache
  void add_to(Args& args);  // -m, -t, --kernels, --disable, --convert, --trace, --no-tune, --pack-cache, --no-pack-cache
};

struct SamplingFlags {
  long long seed = -1;
  size_t top_k = 40, last_n = 64;
  double temp = 0.8, top_p = 0.95, min_p = 0.05, repeat_penalty = 1.0, presence_penalty = 0, frequency_penalty = 0;
  // --temp, --top-k, --top-p, --min-p, --repeat-penalty, --presence-penalty, --frequency-penalty,
  // --repeat-last-n, -s
  void add_to(Args& args);
  llm::SamplerParams params() const;  // checks the values (UsageError)
};

// -c/--ctx-size and -b/--batch-size.
struct ContextFlags {
  size_t n_ctx = 0, n_batch = 512;
  void add_to(Args& args);
};

// A loaded model, its tokenizer and the thread pool/scratch its matmuls run on.
struct LoadedModel {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<llm::Model> model;
  std::unique_ptr<llm::Tokenizer> tok;
  size_t threads = 0;
  static LoadedModel load(const ModelFlags& f);  // progress bar, or the trace of every packed weight
  size_t default_ctx() const { return std::min<size_t>(model->config().n_ctx_train, 4096); }
  // -c N as given (0: default_ctx()), with a warning when it is beyond the trained context.
  size_t context_size(size_t n_ctx) const;
  void print_model_lines() const;  // "model: ..." and "load: ..." on stderr
};

}  // namespace qmm::cli
