// qmm bench serve: aggregate decode tokens/s of 1, 2, 4, 8 ... sequences decoded together by
// the generator (src/llm/generate.h), the way `qmm serve` decodes concurrent conversations: each
// step is one forward pass whose matmuls have m = number of sequences, so the weights are read
// once per step instead of once per sequence. Every sequence first prefills a prompt of
// random tokens; then -n steps with all of them decoding are timed. The configurations are
// interleaved within each repetition (the machine's bandwidth drifts), and the speed-up over one
// sequence is the median of the per-repetition ratios.
//
// With --system-prompt N: the time to first token of a new conversation whose N-token system
// prompt an earlier conversation used, after another conversation took the slot (so the slot's
// own cache no longer holds it), without and with the prompt cache (--cache-ram), alternated.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "qmm/cli/args.h"
#include "bench_util.h"
#include "bench_verbs.h"
#include "core/error.h"
#include "llm/generate.h"
#include "qmm/cli/llm_session.h"
#include "qmm/cli/llm_util.h"

namespace qmm::cli {
namespace {

std::vector<size_t> parse_list(const std::string& s) {
  std::vector<size_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 256) throw UsageError("--parallel expects numbers 1..256 like 1,2,4,8, got '" + s + "'");
    out.push_back(static_cast<size_t>(v));
  }
  if (out.empty()) throw UsageError("--parallel is empty");
  return out;
}

// --depth-file: one sequence's -p prompt (random tokens of a fixed seed) prefilled once and kept as
// a slot file (llm/slot_file.h), read when it exists: a -p 4000 run then prefills 4000 tokens once,
// not once per sequence of every configuration and repetition.
struct DepthFile {
  std::string path;
  std::vector<int32_t> prompt;
  bool read = false;  // the file existed
};

std::vector<int32_t> random_tokens(const LoadedModel& lm, size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(lm.tok->n_vocab() - 1));
  std::vector<int32_t> t(n);
  for (int32_t& x : t) x = tok(rng);
  return t;
}

// Generator options of `seqs` slots of n_ctx positions, KV cache types kv.
llm::GeneratorOptions options(size_t seqs, size_t n_ctx, llm::KvTypes kv) {
  llm::GeneratorOptions o{seqs, n_ctx, 512, seqs};
  o.kv = kv;
  return o;
}

DepthFile prepare_depth_file(const LoadedModel& lm, llm::KvTypes kv, const std::string& path, size_t prompt_len) {
  std::mt19937 rng(4096);
  DepthFile f{path, random_tokens(lm, prompt_len, rng)};
  llm::Generator gen(*lm.model, *lm.tok, *lm.ctx, options(1, prompt_len + 2, kv));
  if (std::filesystem::exists(path)) {
    gen.restore_slot(0, path);
    const std::vector<int32_t>& held = gen.cached(0);
    check_arg(held.size() >= prompt_len, "depth file '" + path + "' holds " + std::to_string(held.size()) +
                                             " tokens, -p asks for " + std::to_string(prompt_len));
    check_arg(std::equal(f.prompt.begin(), f.prompt.end(), held.begin()),
              "depth file '" + path + "' was filled from other tokens than bench serve's -p prompt");
    f.read = true;
    return f;
  }
  llm::Request r;
  r.prompt = f.prompt;
  r.params.sampling.temperature = 0;
  r.params.max_tokens = 1;
  gen.submit(std::move(r));
  gen.run();
  gen.save_slot(0, path);
  return f;
}

// Seconds per step of `steps` decode steps with `seqs` sequences all decoding.
// With `trace`: the timed steps' matmuls, their times and the time outside them on stderr (--trace).
// With `filled` (--depth-file): every sequence restores that slot file and prefills only its last token.
double time_steps(const LoadedModel& lm, llm::KvTypes kv, size_t seqs, size_t prompt_len, size_t steps, std::mt19937& rng, bool cpu_time,
                  bool trace = false, const DepthFile* filled = nullptr) {
  const size_t chunks = (prompt_len + 511) / 512;  // steps each prompt's prefill takes
  const size_t max_tokens = steps + seqs * chunks + 1;  // outlasts the others' prefills and the timed steps
  const size_t n_ctx = prompt_len + max_tokens + 1;
  llm::Generator gen(*lm.model, *lm.tok, *lm.ctx, options(seqs, n_ctx, kv));
  size_t started = 0;
  for (size_t s = 0; s < seqs; ++s) {
    llm::Request r;
    if (filled) {
      gen.restore_slot(static_cast<int>(s), filled->path);
      r.prompt = filled->prompt;
      r.slot = static_cast<int>(s);
    } else {
      r.prompt = random_tokens(lm, prompt_len, rng);
    }
    r.params.sampling.temperature = 0;
    r.params.ignore_eos = true;
    r.params.max_tokens = max_tokens;
    bool first = true;
    r.on_token = [&started, first](const llm::Piece&) mutable {
      started += first;
      first = false;
      return true;
    };
    gen.submit(std::move(r));
  }
  while (started < seqs) gen.step();
  const auto clock = cpu_time ? process_cpu_seconds : now_seconds;
  const std::string stage = std::to_string(steps) + " decode steps of " + std::to_string(seqs) + " sequence" + (seqs == 1 ? "" : "s");
  MatmulTrace tracer;
  if (trace) tracer.begin(stage.c_str());
  const double t0 = clock();
  for (size_t i = 0; i < steps; ++i) gen.step();
  const double t = (clock() - t0) / (cpu_time ? static_cast<double>(lm.threads) : 1.0);
  if (trace) tracer.end();
  gen.cancel_all();
  return t / static_cast<double>(steps);
}

// A generator with one slot, and the seconds from submit to the first token of a prompt.
struct Conversations {
  double (*clock)();  // wall or process CPU seconds
  double per = 1;     // CPU time is divided by the threads
  llm::Generator gen;
  size_t cached = 0;  // of the last prompt
  Conversations(const LoadedModel& lm, llm::KvTypes kv, size_t n_ctx, size_t cache_bytes, bool cpu_time)
      : clock(cpu_time ? process_cpu_seconds : now_seconds),
        per(cpu_time ? static_cast<double>(lm.threads) : 1.0),
        gen(*lm.model, *lm.tok, *lm.ctx, [&] {
          llm::GeneratorOptions o = options(1, n_ctx, kv);
          o.cache_bytes = cache_bytes;
          return o;
        }()) {}
  double ttft(std::vector<int32_t> prompt) {
    llm::Request r;
    r.prompt = std::move(prompt);
    r.params.sampling.temperature = 0;
    r.params.ignore_eos = true;
    r.params.max_tokens = 1;
    double t_first = 0;
    r.on_token = [&t_first, this](const llm::Piece&) {
      if (t_first == 0) t_first = clock();
      return true;
    };
    r.on_done = [this](const llm::Result& res) { cached = res.cached_tokens; };
    const double t0 = clock();
    gen.submit(std::move(r));
    gen.run();
    return (t_first - t0) / per;
  }
};

int bench_prompt_cache(const LoadedModel& lm, llm::KvTypes kv, const std::string& path, size_t sys_len, size_t user_len,
                       size_t reps, size_t cache_mib, bool cpu_time) {
  std::mt19937 rng(42);
  const std::vector<int32_t> sys = random_tokens(lm, sys_len, rng);
  auto conversation = [&] {
    std::vector<int32_t> p = sys, user = random_tokens(lm, user_len, rng);
    p.insert(p.end(), user.begin(), user.end());
    return p;
  };
  const size_t n_ctx = sys_len + user_len + 8;
  Conversations off(lm, kv, n_ctx, 0, cpu_time), on(lm, kv, n_ctx, cache_mib << 20, cpu_time);
  if (!on.gen.cache_off_reason().empty()) throw Error(Status::unsupported, on.gen.cache_off_reason());
  on.ttft(conversation());  // the first conversation with this system prompt
  std::vector<double> t_off, t_on, ratio;
  size_t cached = 0;
  for (size_t r = 0; r < reps; ++r) {
    double a = 0, b = 0;
    for (Conversations* c : {&off, &on}) {
      c->ttft(random_tokens(lm, 64, rng));  // another conversation takes the slot
      (c == &off ? a : b) = c->ttft(conversation());
    }
    cached = on.cached;
    t_off.push_back(a);
    t_on.push_back(b);
    ratio.push_back(a / b);
  }
  std::printf("bench serve: %s, %zu thread%s, KV cache K %s, V %s, prompt cache: a new conversation's %zu-token system prompt + "
              "%zu-token message, %zu repetition%s (medians)%s\n",
              path.c_str(), lm.threads, lm.threads == 1 ? "" : "s", llm::kv_type_name(kv.k), llm::kv_type_name(kv.v), sys_len,
              user_len, reps, reps == 1 ? "" : "s", cpu_time ? ", CPU time" : "");
  std::printf("%22s %14s %16s\n", "time to first token", "cached tokens", "x without cache");
  std::printf("%22s %11.1f ms %14zu %15.2fx\n", "without prompt cache", median(t_off) * 1e3, size_t{0}, 1.0);
  std::printf("%22s %11.1f ms %14zu %15.2fx\n", "with prompt cache", median(t_on) * 1e3, cached, median(ratio));
  return 0;
}

}  // namespace

int bench_serve(int argc, char** argv) {
  ModelFlags mf;
  mf.threads = 1;
  std::string parallel = "1,2,4,8", depth_file;
  size_t steps = 32, prompt_len = 16, reps = 3, sys_len = 0, user_len = 32, cache_mib = 8192;
  bool cpu_time = false, trace = false;
  KvFlags kv_flags;
  Args args("bench serve",
            "Aggregate decode tokens/s of N sequences decoded together (one forward pass per step with m = N rows, as\n"
            "`qmm serve` does for concurrent conversations), for each N of --parallel. Prompts are random tokens.",
            argc - 1, argv + 1);
  args.str("-m,--model", &mf.path, "FILE", "GGUF model (required)")
      .str("--parallel", &parallel, "LIST", "numbers of concurrent sequences (default 1,2,4,8)")
      .size("-n,--n-gen", &steps, "timed decode steps per configuration (default 32)")
      .size("-p,--n-prompt", &prompt_len, "prompt tokens per sequence (default 16)")
      .str("--depth-file", &depth_file, "FILE",
           "a slot file of the -p prompt's prefill: read when it exists, else written; every sequence starts from it (same model)")
      .size("-t,--threads", &mf.threads, "threads (default 1)")
      .size("-r,--repetitions", &reps, "repetitions; medians are reported (default 3)")
      .str("--kernels", &mf.kernels, "LIST", "allow only these ISAs / variants (like QMM_KERNELS)")
      .str("--disable", &mf.disable, "LIST", "exclude these ISAs / variants (like QMM_DISABLE)")
      .count("--system-prompt", &sys_len,
             "instead: time to first token of a new conversation with this many system-prompt tokens, without and with the prompt cache")
      .size("--user-tokens", &user_len, "--system-prompt: tokens of the new conversation's message (default 32)")
      .size("--cache-ram", &cache_mib, "--system-prompt: the prompt cache's MiB (default 8192)")
      .flag("--cpu-time", &cpu_time, "time by process CPU time / threads (a machine shared with other work)")
      .flag("--trace", &trace, "print each timed configuration's matmuls with their time, and the time outside them (attention, sampling...)");
  kv_flags.add_to(args);
  args.parse();
  const llm::KvTypes kv = kv_flags.types();
  if (trace && sys_len > 0) throw UsageError("--trace times the decode steps, not --system-prompt");
  const std::vector<size_t> ns = parse_list(parallel);
  if (steps > 100000 || prompt_len > 100000) throw UsageError("-n and -p must be at most 100000");
  if (reps > 1000) throw UsageError("-r must be at most 1000");
  if (sys_len > 100000 || user_len > 100000 || cache_mib > (size_t{1} << 30)) {
    throw UsageError("--system-prompt and --user-tokens must be at most 100000, --cache-ram at most 2^30");
  }
  if (!depth_file.empty() && sys_len > 0) throw UsageError("--depth-file fills the decode runs' prompts, not --system-prompt's");
  if (!depth_file.empty() && prompt_len < 2) throw UsageError("--depth-file needs -p of 2 tokens or more");
  const LoadedModel lm = LoadedModel::load(mf);
  if (sys_len > 0) return bench_prompt_cache(lm, kv, mf.path, sys_len, user_len, reps, cache_mib, cpu_time);
  const size_t weight_bytes = lm.model->stats().packed_bytes;

  // Warm-up (the pool's threads, the weights' pages, the allocator), then the repetitions,
  // configurations interleaved. Every timed configuration builds its own generator and prefills
  // its own prompts, so the warm-up's prompts are short: at -p 4000 full-length ones were a fifth
  // of the run.
  std::mt19937 rng(42);
  const DepthFile filled = depth_file.empty() ? DepthFile{} : prepare_depth_file(lm, kv, depth_file, prompt_len);
  const DepthFile* fill = depth_file.empty() ? nullptr : &filled;
  time_steps(lm, kv, ns.back(), std::min<size_t>(prompt_len, 64), 2, rng, cpu_time);
  std::vector<std::vector<double>> step_s(ns.size()), ratio(ns.size());
  for (size_t r = 0; r < reps; ++r) {
    double one = 0;
    for (size_t i = 0; i < ns.size(); ++i) {
      const double t = time_steps(lm, kv, ns[i], prompt_len, steps, rng, cpu_time, trace, fill);
      step_s[i].push_back(t);
      if (i == 0) one = t / static_cast<double>(ns[0]);
      ratio[i].push_back(one / (t / static_cast<double>(ns[i])));
    }
  }

  const std::string from = fill ? std::string(" (") + (fill->read ? "read from " : "written to ") + depth_file + ")" : "";
  std::printf("bench serve: %s, %s packed weights, %zu thread%s, KV cache K %s, V %s, %zu-token prompts%s, %zu decode steps, "
              "%zu repetition%s (medians)%s\n",
              mf.path.c_str(), mib(weight_bytes).c_str(), lm.threads, lm.threads == 1 ? "" : "s", llm::kv_type_name(kv.k),
              llm::kv_type_name(kv.v), prompt_len, from.c_str(), steps, reps, reps == 1 ? "" : "s", cpu_time ? ", CPU time" : "");
  std::printf("%10s %10s %16s %14s %12s %14s\n", "sequences", "step ms", "aggregate tok/s", "per sequence", "weights GB/s",
              ("x " + std::to_string(ns[0]) + " seq").c_str());
  for (size_t i = 0; i < ns.size(); ++i) {
    const double t = median(step_s[i]);
    std::printf("%10zu %10.2f %16.1f %14.1f %12.1f %13.2fx\n", ns[i], t * 1e3, static_cast<double>(ns[i]) / t, 1.0 / t,
                static_cast<double>(weight_bytes) / t / 1e9, median(ratio[i]));
  }
  return 0;
}

}  // namespace qmm::cli
