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

// -ctk/--cache-type-k and -ctv/--cache-type-v (llama.cpp's): the KV cache element types.
struct KvFlags {
  std::string k = "f16", v = "f16";
  void add_to(Args& args);
  llm::KvTypes types() const;
};

// -c/--ctx-size and -b/--batch-size, and the KV cache types.
struct ContextFlags {
  size_t n_ctx = 0, n_batch = 512;
  KvFlags kv;
  void add_to(Args& args);
};

// A loaded model, its tokenizer and the thread pool/scratch its matmuls run on.
// MemAvailable of /proc/meminfo in bytes (SIZE_MAX where it cannot be read).
size_t available_memory();

struct LoadedModel {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<llm::Model> model;
  std::unique_ptr<llm::Tokenizer> tok;
  size_t threads = 0;
  KernelFilter filter;  // the kernels --kernels/--disable and QMM_KERNELS/QMM_DISABLE permit
  static LoadedModel load(const ModelFlags& f);  // progress bar, or the trace of every packed weight
  // The positions of each of n_seq sequences' KV caches of types kv: `requested` checked
  // against the memory available (an error when they cannot fit), or with requested == 0 the
  // model's trained context, lowered only to what fits, and said so in one line on stderr; a
  // warning when it is beyond the trained context.
  size_t context(size_t requested, llm::KvTypes kv, size_t n_seq = 1) const;
  void print_model_lines() const;  // "model: ..." and "load: ..." on stderr
};

}  // namespace qmm::cli
