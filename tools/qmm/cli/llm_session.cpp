#include "llm_session.h"

#include <algorithm>
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
      .flag("--trace", &trace, "print the packers and microkernels of each stage (load, prefill, decode), each matmul's time and the time outside them")
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

void KvFlags::add_to(Args& args) {
  args.choice("-ctk,--cache-type-k", &k, {"f32", "f16", "q8_0", "q4_0"}, "KV cache type of the keys (default f16; q8_0/q4_0 rotated)")
      .choice("-ctv,--cache-type-v", &v, {"f32", "f16", "q8_0", "q4_0"}, "KV cache type of the values (default f16)");
}

llm::KvTypes KvFlags::types() const {
  const std::optional<llm::KvType> kt = llm::parse_kv_type(k), vt = llm::parse_kv_type(v);
  if (!kt || !vt) throw UsageError("-ctk / -ctv take " + llm::kv_type_names());
  return {*kt, *vt};
}

void ContextFlags::add_to(Args& args) {
  args.count("-c,--ctx-size", &n_ctx, "context size in tokens (default 0: the model's trained context, lowered to what fits in memory)")
      .size("-b,--batch-size", &n_batch, "largest prefill batch (default 512)");
  kv.add_to(args);
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

size_t available_memory() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return SIZE_MAX;
  char line[256];
  size_t kib = 0;
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "MemAvailable: %zu kB", &kib) == 1;
  std::fclose(f);
  return found ? kib * 1024 : SIZE_MAX;
}

namespace {

std::string gib(size_t bytes) {  // (MiB below 1 GiB)
  if (bytes < (size_t{1} << 30)) return mib(bytes);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

}  // namespace

size_t LoadedModel::context(size_t requested, llm::KvTypes kv, size_t n_seq) const {
  const llm::Config& c = model->config();
  const size_t per_token = llm::State::kv_bytes_per_token(c, kv) * n_seq, avail = available_memory();
  const size_t budget = avail == SIZE_MAX ? SIZE_MAX : avail / 10 * 9;  // (a tenth left for scratch and the rest)
  const size_t fits = per_token ? budget / per_token : SIZE_MAX;
  const std::string types = std::string("K ") + llm::kv_type_name(kv.k) + ", V " + llm::kv_type_name(kv.v);
  const std::string seqs = n_seq > 1 ? " x " + std::to_string(n_seq) + " sequences" : "";
  if (requested > 0) {
    if (requested > fits) {
      fail(Status::invalid_argument, "a KV cache of " + std::to_string(requested) + " tokens" + seqs + " (" + types + ") needs " +
                                         gib(requested * per_token) + ", " + gib(avail) +
                                         " of memory is available: lower -c, or use -ctk/-ctv q8_0");
    }
    if (const size_t train = c.n_ctx_train; train > 0 && requested > train) {
      std::fprintf(stderr, "qmm: -c %zu is more than the %zu tokens the model was trained on: expect poor text past %zu\n", requested,
                   train, train);
    }
    return requested;
  }
  const size_t train = std::min<size_t>(c.n_ctx_train, size_t{1} << 24);  // (State's limit: a file may claim more)
  if (train <= fits) {
    std::fprintf(stderr, "context: %zu tokens%s, the model's trained context (KV cache %s, %s)\n", train, seqs.c_str(),
                 gib(train * per_token).c_str(), types.c_str());
    return train;
  }
  const size_t n = fits >= 512 ? fits / 256 * 256 : fits;
  if (n < 8) fail(Status::invalid_argument, "not even 8 tokens of KV cache (" + types + ") fit in the " + gib(avail) + " available");
  std::fprintf(stderr, "context: %zu tokens%s, lowered from the model's trained %zu: its KV cache (%s) would need %s, %s is available\n",
               n, seqs.c_str(), train, types.c_str(), gib(train * per_token).c_str(), gib(avail).c_str());
  return n;
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
  lm.filter = opt.filter;
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
