#include "llm_session.h"

#include <cstdio>
#include <random>
#include <thread>

#include "core/blocks.h"
#include "core/error.h"
#include "llm_util.h"

namespace qmm::cli {

void ModelFlags::add_to(Args& args) {
  args.str("-m,--model", &path, "FILE", "GGUF model (required)")
      .count("-t,--threads", &threads, "threads (default 0: all cores; one for models under 16 MiB)")
      .str("--kernels", &kernels, "LIST", "allow only these ISAs / variants (like QMM_KERNELS)")
      .str("--disable", &disable, "LIST", "exclude these ISAs / variants (like QMM_DISABLE)")
      .choice("--convert", &convert, type_names([](const TypeInfo& t) { return t.native; }),
              "re-quantize every weight at load (a block type only where k is a multiple of its block; qc8/qc4: per "
              "output channel)")
      .flag("--trace", &trace, "print the packers and microkernels of each stage (load, prefill, decode)")
      .no_effect("-ngl,--gpu-layers,--n-gpu-layers", "N", "it runs on the CPU")
      .no_effect("-fa,--flash-attn", "", "its attention is its own CPU kernel", {"on", "off", "auto"})
      .no_effect("--no-mmap", "", "it maps the file only to pack the weights, then releases it")
      .no_effect("--mlock", "", "its packed weights are ordinary memory")
      .flag("--no-tune", &no_tune,
            "keep the default decode kernels and thread chunks; nothing measured or cached (like QMM_TUNE=0)")
      .str("--pack-cache", &pack_cache, "DIR",
           "keep the packed weights in DIR (default $XDG_CACHE_HOME/qmm/packs, else ~/.cache/qmm/packs): later loads map them")
      .flag("--no-pack-cache", &no_pack_cache, "pack the weights at every load; read and write no pack cache");
}

void SamplingFlags::add_to(Args& args) {
  args.real("--temp,--temperature", &temp, "temperature; 0 = greedy (default 0.8)")
      .count("--top-k", &top_k, "top-k; 0 = off (default 40)")
      .real("--top-p", &top_p, "top-p; 1 = off (default 0.95)")
      .real("--min-p", &min_p, "min-p; 0 = off (default 0.05)")
      .real("--repeat-penalty", &repeat_penalty, "repetition penalty; 1 = off (default 1.0)")
      .real("--presence-penalty", &presence_penalty, "subtracted from the logit of each token in the last N; 0 = off (default 0)")
      .real("--frequency-penalty", &frequency_penalty, "subtracted per occurrence in the last N; 0 = off (default 0)")
      .count("--repeat-last-n", &last_n, "tokens N the penalties look back on (default 64)")
      .integer("-s,--seed", &seed, "random seed (default -1: random)");
}

void ContextFlags::add_to(Args& args) {
  args.count("-c,--ctx-size", &n_ctx, "context size in tokens (default 0: the model's, at most 4096)")
      .size("-b,--batch-size", &n_batch, "largest prefill batch (default 512)");
}

llm::SamplerParams SamplingFlags::params() const {
  if (!(temp >= 0)) throw UsageError("--temp must be >= 0");
  if (!(top_p > 0 && top_p <= 1)) throw UsageError("--top-p must be in (0, 1]");
  if (!(min_p >= 0 && min_p <= 1)) throw UsageError("--min-p must be in [0, 1]");
  if (!(repeat_penalty > 0)) throw UsageError("--repeat-penalty must be > 0");
  llm::SamplerParams sp;
  sp.temperature = static_cast<float>(temp);
  sp.top_k = static_cast<int>(std::min<size_t>(top_k, 1u << 30));
  sp.top_p = static_cast<float>(top_p);
  sp.min_p = static_cast<float>(min_p);
  sp.repeat_penalty = static_cast<float>(repeat_penalty);
  sp.repeat_last_n = last_n;
  sp.presence_penalty = static_cast<float>(presence_penalty);
  sp.frequency_penalty = static_cast<float>(frequency_penalty);
  sp.seed = seed >= 0 ? static_cast<uint64_t>(seed) : std::random_device{}();
  return sp;
}

WeightType convert_type(const std::string& name) {
  const TypeInfo* t = find_type(name.c_str());
  if (!t || !t->native) throw UsageError("unknown --convert type '" + name + "'");
  return t->type();
}

LoadedModel LoadedModel::load(const ModelFlags& f) {
  if (f.path.empty()) throw UsageError("-m/--model is required");
  if (f.threads > 1024) throw UsageError("-t must be at most 1024");
  if (const unsigned cpus = std::thread::hardware_concurrency(); cpus > 0 && f.threads > cpus) {
    std::fprintf(stderr, "qmm: -t %zu is more threads than the %u CPUs: they take turns on the cores (slower than -t %u)\n",
                 f.threads, cpus, cpus);
  }
  LoadedModel lm;
  lm.threads = f.threads;
  if (lm.threads == 0) lm.threads = default_threads(f.path);  // the same default as qmm bench model
  llm::LoadOptions opt;
  opt.filter = kernel_overrides(f.kernels, f.disable, "--kernels/--disable");
  if (!f.convert.empty()) {
    opt.convert_to = convert_type(f.convert);
  }
  if (f.no_pack_cache && !f.pack_cache.empty()) throw UsageError("--pack-cache and --no-pack-cache contradict each other");
  if (!f.no_pack_cache) opt.pack_cache = f.pack_cache;
  if (!f.no_tune && tune_enabled_by_env()) {
    opt.tune = TuneOptions{};
    opt.tune->force = f.retune;
  }
  ProgressBar bar("loading");
  if (f.trace) {
    std::fprintf(stderr, "trace load: %s\n", f.path.c_str());
    opt.trace = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  } else {
    opt.progress = [&bar](size_t done, size_t total) { bar.update(done, total); };
  }
  lm.ctx = std::make_unique<Context>(static_cast<int>(lm.threads));
  lm.model = std::make_unique<llm::Model>(llm::Model::load(f.path, opt, lm.ctx->pool()));
  bar.finish();
  lm.tok = std::make_unique<llm::Tokenizer>(llm::Tokenizer::from_gguf(lm.model->file()));
  if (lm.tok->n_vocab() > lm.model->config().n_vocab) {
    fail(Status::io, f.path + ": the tokenizer has " + std::to_string(lm.tok->n_vocab()) + " tokens, the model " +
                         std::to_string(lm.model->config().n_vocab));
  }
  if (f.trace) std::fprintf(stderr, "  tokenizer: %s\n", lm.tok->description().c_str());
  return lm;
}

size_t LoadedModel::context_size(size_t n_ctx) const {
  if (n_ctx == 0) return default_ctx();
  if (const size_t train = model->config().n_ctx_train; train > 0 && n_ctx > train) {
    std::fprintf(stderr, "qmm: -c %zu is more than the %zu tokens the model was trained on: expect poor text past %zu\n", n_ctx,
                 train, train);
  }
  return n_ctx;
}

void LoadedModel::print_model_lines() const {
  const llm::Config& c = model->config();
  const llm::LoadStats& st = model->stats();
  std::fprintf(stderr, "\nmodel:   %s, %zu layers, dim %zu, %zu heads (%zu KV), vocab %zu; %s\n", c.arch.c_str(), c.n_layer,
               c.n_embd, c.n_head, c.n_head_kv, c.n_vocab, tok->kind() == llm::Tokenizer::Kind::spm ? "SentencePiece" : "BPE");
  if (st.from_pack_cache) {
    std::fprintf(stderr, "load:    %.3f s; packed weights %s mapped from the pack cache (no repack), file %s\n",
                 st.load_seconds, mib(st.packed_bytes).c_str(), mib(st.file_bytes).c_str());
  } else {
    char written[64] = "";
    if (!st.pack_file.empty()) std::snprintf(written, sizeof written, ", pack cache written in %.3f s", st.pack_write_seconds);
    std::fprintf(stderr, "load:    %.3f s (repack %.3f s%s); packed weights %s, file %s (mapped, released after packing)\n",
                 st.load_seconds, st.pack_seconds, written, mib(st.packed_bytes).c_str(), mib(st.file_bytes).c_str());
  }
  if (st.tune_seconds > 0.05) std::fprintf(stderr, "tune:    %.3f s measuring the decode plans (cached for later loads)\n", st.tune_seconds);
  if (!st.converted.empty()) std::fprintf(stderr, "convert: %s (no native kernels for these types)\n", st.converted.c_str());
}

}  // namespace qmm::cli
