// qmm bench model: llama-bench's pp<N> (prefill N tokens as one batch from an empty cache)
// and tg<N> (N single-token decodes) for a GGUF model, for every combination of the -p, -n
// and -t lists, each repeated -r times and reported as mean ± standard deviation. Each test is
// also given as a fraction of the bound the machine limits measured in the same run give:
//   decode  ≤ DRAM bandwidth ÷ packed weight bytes read per token
//   prefill ≤ 1 ÷ Σ (matmul ops per token ÷ peak of the kernel family: int8 or FP32)
// and decode once more as a paired ratio: each token is followed by a plain read of every
// packed weight it read (of an MoE layer, the router and the experts the token chose) and of the
// KV cache bytes it attended to, and the median of (read time ÷ token time) is the share of the
// memory bandwidth of that moment the decode reached. An MoE model's decode bound counts the
// weights a token reads on average: expert_used_count of expert_count experts per layer.
// -d (llama-bench's --n-depth) fills the KV cache to that many positions first; the decode
// bound then counts the KV bytes read per token too, so "of bound" stays meaningful at depth.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "qmm/cli/args.h"
#include "bench_util.h"
#include "bench_verbs.h"
#include "core/error.h"
#include "qmm/cli/json.h"
#include "limits.h"
#include "llm/model.h"
#include "qmm/cli/llm_session.h"
#include "qmm/cli/llm_util.h"

namespace qmm::cli {
namespace {

struct Result {
  size_t threads;
  bool prefill;  // pp (else tg)
  size_t n;
  size_t then_gen = 0;               // pp<n>+tg<then_gen> (llama-bench's -pg): the prompt, then that many decodes
  size_t depth;                      // positions in the KV cache before the test
  std::vector<double> tokens_per_s;  // one per repetition
  double bound = 0;                  // tokens/s the limits allow (0: not measured)
  double paired = -1;                // tg: median (read ÷ token) time (-1: none)
  double paired_read_gbs = 0;
  const MachineLimits* limits = nullptr;
};

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double stddev(const std::vector<double>& v) {  // sample standard deviation; NaN for one value
  if (v.size() < 2) return NAN;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

std::string test_name(const Result& r) {
  return (r.prefill ? "pp" : "tg") + std::to_string(r.n) + (r.then_gen ? "+tg" + std::to_string(r.then_gen) : "") +
         (r.depth ? " @ d" + std::to_string(r.depth) : "");
}
size_t n_prompt(const Result& r) { return r.prefill ? r.n : 0; }
size_t n_gen(const Result& r) { return r.prefill ? r.then_gen : r.n; }

// What the rows have in common: the model and its kernels.
struct ModelInfo {
  std::string path, name, arch, gemm, gemv;
  size_t packed_bytes, bytes_per_token, reps;
  double load_seconds, pack_seconds;
  size_t peak_rss;
  llm::KvTypes kv;
  size_t kv_bytes = 0, kv_positions = 0, kv_per_token = 0;  // the cache allocated, its positions, bytes per position
};

std::string result_json(const ModelInfo& mi, const Result& r) {
  const double avg = mean(r.tokens_per_s), sd = stddev(r.tokens_per_s);
  JsonObject o;
  o.str("model", mi.path).str("arch", mi.arch).integer("packed_bytes", static_cast<long long>(mi.packed_bytes));
  o.str("gemm", mi.gemm).str("gemv", mi.gemv).integer("threads", static_cast<long long>(r.threads));
  o.str("test", test_name(r)).integer("n_prompt", static_cast<long long>(n_prompt(r)));
  o.integer("n_gen", static_cast<long long>(n_gen(r))).integer("n_depth", static_cast<long long>(r.depth));
  o.str("type_k", llm::kv_type_name(mi.kv.k)).str("type_v", llm::kv_type_name(mi.kv.v));
  o.integer("kv_bytes", static_cast<long long>(mi.kv_bytes)).integer("repetitions", static_cast<long long>(mi.reps));
  o.num("avg_ts", avg, 3).num("stddev_ts", sd, 3);
  std::string samples = "[";
  for (double v : r.tokens_per_s) samples += (samples.size() > 1 ? ", " : "") + json_number(v, 3);
  o.raw("samples_ts", samples + "]");
  o.measured("bound_ts", r.bound, r.bound > 0, 3).measured("of_bound", avg / r.bound, r.bound > 0);
  const bool paired_ok = r.paired >= 0 && paired_plausible(r.paired);
  o.measured("paired_ratio", r.paired, paired_ok).measured("paired_read_gbs", r.paired_read_gbs, r.paired >= 0, 2);
  if (r.paired >= 0 && !paired_ok) o.str("paired_problem", kPairedProblem).num("paired_measured", r.paired, 4);
  o.num("load_seconds", mi.load_seconds, 3).num("pack_seconds", mi.pack_seconds, 3);
  o.integer("peak_rss", static_cast<long long>(mi.peak_rss));
  o.raw("limits", r.limits && r.limits->dram_read_gbs > 0 ? limits_json(*r.limits) : "null");
  return o.text();
}

// CSV: fields quoted when they hold a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void print_results(const std::string& format, const ModelInfo& mi, const std::vector<Result>& results,
                   const std::vector<std::unique_ptr<MachineLimits>>& limits) {
  if (format == "json" || format == "jsonl") {
    if (format == "json") std::printf("[\n");
    for (size_t i = 0; i < results.size(); ++i) {
      const std::string o = result_json(mi, results[i]);
      if (format == "json") {
        std::printf("  %s%s\n", o.c_str(), i + 1 < results.size() ? "," : "");
      } else {
        std::printf("%s\n", o.c_str());
      }
    }
    if (format == "json") std::printf("]\n");
    return;
  }
  if (format == "csv") {
    std::printf("model,arch,packed_bytes,gemm,threads,test,n_prompt,n_gen,n_depth,type_k,type_v,repetitions,avg_ts,stddev_ts,"
                "bound_ts,paired_ratio\n");
    for (const Result& r : results) {
      const double avg = mean(r.tokens_per_s);
      std::printf("%s,%s,%zu,%s,%zu,%s,%zu,%zu,%zu,%s,%s,%zu,%s,%s,%s,%s\n", csv_field(mi.path).c_str(), csv_field(mi.arch).c_str(),
                  mi.packed_bytes, mi.gemm.c_str(), r.threads, test_name(r).c_str(), n_prompt(r),
                  n_gen(r), r.depth, llm::kv_type_name(mi.kv.k), llm::kv_type_name(mi.kv.v), mi.reps, fmt("%.3f", avg).c_str(), fmt("%.3f", stddev(r.tokens_per_s)).c_str(),
                  r.bound > 0 ? fmt("%.3f", r.bound).c_str() : "",
                  r.paired >= 0 && paired_plausible(r.paired) ? fmt("%.4f", r.paired).c_str() : "");
    }
    return;
  }
  // md: the limits of each thread count, then one table like llama-bench's.
  for (const auto& l : limits) {
    if (l->dram_read_gbs > 0) print_limits(*l, false);
  }
  std::printf("\nmodel %s: %s, %s packed (%.1f MB of weights read per decoded token); load %.2f s (repack %.2f s); "
              "peak RSS %s\n  kernels: GEMM %s, GEMV %s\n\n",
              mi.name.c_str(), mi.arch.c_str(), mib(mi.packed_bytes).c_str(), static_cast<double>(mi.bytes_per_token) / 1e6,
              mi.load_seconds, mi.pack_seconds, mib(mi.peak_rss).c_str(), mi.gemm.c_str(), mi.gemv.c_str());
  std::printf("  KV cache: K %s, V %s, %s for %zu positions (%.1f KiB per position)\n\n", llm::kv_type_name(mi.kv.k),
              llm::kv_type_name(mi.kv.v), mib(mi.kv_bytes).c_str(), mi.kv_positions, static_cast<double>(mi.kv_per_token) / 1024);
  std::printf("| threads | test | t/s | bound t/s | of bound | paired |\n");
  std::printf("| ------: | ---: | --: | --------: | -------: | -----: |\n");
  std::string problems;
  for (const Result& r : results) {
    const double avg = mean(r.tokens_per_s), sd = stddev(r.tokens_per_s);
    const std::string ts = std::isfinite(sd) ? fmt("%.2f", avg) + " ± " + fmt("%.2f", sd) : fmt("%.2f", avg);
    const bool implausible = r.paired >= 0 && !paired_plausible(r.paired);
    if (implausible) {
      problems += "  " + test_name(r) + ", " + std::to_string(r.threads) + " thread(s): paired " +
                  fmt("%.1f%%", 100.0 * r.paired) + " is " + kPairedProblem + "\n";
    }
    std::printf("| %7zu | %4s | %s | %s | %s | %s |\n", r.threads, test_name(r).c_str(), ts.c_str(),
                r.bound > 0 ? fmt("%.2f", r.bound).c_str() : "-", r.bound > 0 ? fmt("%.1f%%", 100.0 * avg / r.bound).c_str() : "-",
                implausible ? "no result*" : r.paired >= 0 ? fmt("%.1f%%", 100.0 * r.paired).c_str() : "-");
  }
  if (!problems.empty()) std::printf("\n* a measurement problem, not a result:\n%s", problems.c_str());
  std::printf("\n%zu repetition%s per test (t/s: mean ± standard deviation). bound: the limits above (decode: the\n"
              "weights and the KV bytes read per token; MoE: the chosen experts only); paired: the decode's share of a\n"
              "plain read of the packed weights the token read and the attended KV bytes timed right after it (median).\n"
              "@ dN: N positions cached first.\n",
              mi.reps, mi.reps == 1 ? "" : "s");
}

}  // namespace

int bench_model(int argc, char** argv) {
  std::string model_path, kernels, disable, convert, format = "md";
  std::vector<size_t> n_prompt{512}, n_gen{128}, n_depth{0}, threads;
  KvFlags kv_flags;
  size_t reps = 5;
  bool no_limits = false, json = false, no_tune = false, progress = false;
  std::vector<std::string> pg_args;
  Args args("bench model",
            "Prefill (pp) and decode (tg) tokens/s of a GGUF model, like llama-bench: every combination of the -p,\n"
            "-n and -t lists, -r repetitions each (mean ± standard deviation), and the same as fractions of the\n"
            "machine limits measured in this run (decode: DRAM bandwidth / weight bytes per token; prefill:\n"
            "int8 / FP32 peak / matmul ops per token). Tokens are random ids; the KV cache starts empty, or filled\n"
            "to each -d depth first.",
            argc - 1, argv + 1);
  std::vector<std::string> models;
  args.strs("-m,--model", &models, "FILE", "GGUF model (required; one per run)")
      .counts("-p,--n-prompt", &n_prompt, 0, "prompt tokens of the prefill tests (default 512; 0 skips it)")
      .counts("-n,--n-gen", &n_gen, 0, "tokens of the decode tests (default 128; 0 skips it)")
      .counts("-d,--n-depth", &n_depth, 0, "KV cache positions filled before each test (default 0)")
      .strs("-pg", &pg_args, "PP,TG", "also a prompt of PP tokens then TG decodes, timed together as (PP + TG) / time (repeatable)")
      .counts("-t,--threads", &threads, 1, "thread counts (default: as qmm run, all cores; one for models under 16 MiB)")
      .size("-r,--repetitions", &reps, "repetitions of each test (default 5)")
      .choice("-o,--output", &format, {"md", "csv", "json", "jsonl"}, "output format (default md)")
      .str("--kernels", &kernels, "LIST", "allow only these ISAs / variants (like QMM_KERNELS)")
      .str("--disable", &disable, "LIST", "exclude these ISAs / variants (like QMM_DISABLE)")
      .choice("--convert", &convert, type_names([](const TypeInfo& t) { return t.native; }),
              "re-quantize every weight at load, as qmm run --convert")
      .flag("--no-limits", &no_limits, "skip measuring the machine limits")
      .flag("--progress", &progress, "print each test and repetition to stderr as it starts")
      .flag("--no-tune", &no_tune, "keep the default decode plans (like QMM_TUNE=0); else tuned per thread count, as loads do")
      .no_effect("-ngl,--n-gpu-layers", "N", "it runs on the CPU")
      .no_effect("-fa,--flash-attn", "0|1", "its attention is its own CPU kernel")
      .no_effect("-mmp,--mmap", "0|1", "it maps the file only to pack the weights, then releases it")
      .flag("--json", &json, "the same as -o json");
  kv_flags.add_to(args);
  args.parse();
  if (json) format = "json";
  if (models.empty()) throw UsageError("-m/--model is required");
  if (models.size() > 1) {  // llama-bench measures each; refused rather than measuring only the last
    throw UsageError("one -m per run (" + std::to_string(models.size()) + " given): run qmm bench model once for each model");
  }
  model_path = models[0];
  if (threads.empty()) threads.push_back(default_threads(model_path));
  std::vector<size_t> distinct;  // -t 1,2,1: each count once, in the order given
  for (size_t t : threads) {
    if (std::find(distinct.begin(), distinct.end(), t) == distinct.end()) distinct.push_back(t);
  }
  threads = distinct;
  for (size_t t : threads) {
    if (t > 1024) throw UsageError("-t must be at most 1024");
  }
  if (reps > 1000) throw UsageError("-r must be at most 1000");
  std::vector<std::pair<size_t, size_t>> pg;  // -pg PP,TG
  for (const std::string& a : pg_args) {
    size_t pp = 0, tg = 0, used = 0;
    const bool ok = std::sscanf(a.c_str(), "%zu,%zu%zn", &pp, &tg, &used) == 2 && used == a.size() && pp > 0 && tg > 0;
    if (!ok) throw UsageError("-pg takes PP,TG (two positive numbers, as 512,128), not '" + a + "'");
    pg.emplace_back(pp, tg);
  }
  size_t max_p = *std::max_element(n_prompt.begin(), n_prompt.end());
  const size_t max_n = *std::max_element(n_gen.begin(), n_gen.end());
  size_t max_pg = 0;  // positions a -pg test fills
  for (const auto& [pp, tg] : pg) max_p = std::max(max_p, pp), max_pg = std::max(max_pg, pp + tg);
  if (max_p + max_n == 0) throw UsageError("nothing to measure (-p 0 -n 0)");
  const size_t max_d = *std::max_element(n_depth.begin(), n_depth.end());
  if (std::max(max_p + max_n, max_pg) > (size_t{1} << 20) || max_d > (size_t{1} << 20)) {
    throw UsageError("-p + -n, -pg's PP + TG and -d must be at most 2^20");
  }
  const llm::KvTypes kv = kv_flags.types();

  llm::LoadOptions opt;
  opt.filter = kernel_overrides(kernels, disable, "--kernels/--disable");
  if (!convert.empty()) opt.convert_to = convert_type(convert);
  ProgressBar bar("loading");
  if (format == "md") opt.progress = [&bar](size_t done, size_t total) { bar.update(done, total); };
  const size_t max_threads = *std::max_element(threads.begin(), threads.end());
  Context load_ctx(static_cast<int>(max_threads));
  llm::Model model = llm::Model::load(model_path, opt, load_ctx.pool());
  bar.finish();
  const llm::Config& c = model.config();
  const llm::LoadStats& st = model.stats();
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(c.n_vocab - 1));
  std::vector<int32_t> prompt(std::max<size_t>(max_d + max_p, 1));
  for (auto& t : prompt) t = tok(rng);
  // Bounds: decode reads every packed weight once per token (an MoE model: the dense ones and
  // its chosen experts; plus one embedding row); prefill does matmul_ops per token on the int8
  // kernels (quantized weights) or FMA (float).
  const double bytes_per_token = static_cast<double>(st.active_bytes) + static_cast<double>(c.n_embd) * 4;
  const double int8_ops = static_cast<double>(st.int8_ops), float_ops = static_cast<double>(st.matmul_ops - st.int8_ops);
  // The int8 peak of the instruction sequence the kernels use: AVX2 kernels (no VNNI) need
  // vpmaddubsw + vpmaddwd + vpaddd per multiply-add, so their peak is the AVX2 figure.
  const Ukernel& gemm = model.layers().front().qkv.parts[0].gemm();
  const Ukernel& gemv = model.layers().front().qkv.parts[0].gemv();
  ModelInfo mi{model_path, std::filesystem::path(model_path).filename().string(), c.arch, gemm.name, gemv.name,
               st.packed_bytes, static_cast<size_t>(bytes_per_token), reps, st.load_seconds, st.pack_seconds, 0, kv};

  std::vector<Result> results;
  std::vector<std::unique_ptr<MachineLimits>> limits;
  auto next_id = [&c](int32_t t) { return static_cast<int32_t>((static_cast<size_t>(t) * 7 + 1) % c.n_vocab); };  // decode input
  const size_t tests_per_thread_count =
      n_depth.size() * (static_cast<size_t>(std::count_if(n_prompt.begin(), n_prompt.end(), [](size_t p) { return p > 0; })) +
                        static_cast<size_t>(std::count_if(n_gen.begin(), n_gen.end(), [](size_t n) { return n > 0; })) + pg.size());
  auto show_progress = [&](const Result& r, size_t rep) {  // llama-bench's --progress, on stderr
    std::fprintf(stderr, "qmm bench model: test %zu/%zu: %s, %zu thread%s, repetition %zu/%zu\n", results.size() + 1,
                 tests_per_thread_count * threads.size(), test_name(r).c_str(), r.threads, r.threads == 1 ? "" : "s",
                 rep + 1, reps);
  };
  for (size_t t : threads) {
    Context ctx(static_cast<int>(t));
    if (!no_tune && tune_enabled_by_env()) model.tune(ctx.pool(), opt.filter, TuneOptions{});
    const size_t n_batch = std::max<size_t>({max_p, std::min<size_t>(max_d, 512), 1});
    llm::State state(model, max_d + std::max<size_t>({max_p, max_n, max_pg, 1}), n_batch, ctx, 1, kv);
    mi.kv_bytes = state.kv_bytes(), mi.kv_positions = state.n_ctx(), mi.kv_per_token = llm::State::kv_bytes_per_token(c, kv);
    // The cache at depth d: kept from the last test when it holds the first d positions, else refilled.
    auto to_depth = [&](size_t d) {
      if (state.pos() >= d && state.truncate(0, d) == d) return;
      state.reset();
      for (size_t p = 0; p < d; p += n_batch) llm::forward(model, state, prompt.data() + p, std::min(n_batch, d - p));
    };
    // Warm-up: one token (first touch of the scratch, the pool's threads). The peak memory is
    // taken before any limits are measured (they read 512 MiB buffers of their own).
    llm::forward(model, state, prompt.data(), 1);
    if (limits.empty()) mi.peak_rss = peak_rss_bytes();
    limits.push_back(std::make_unique<MachineLimits>());
    MachineLimits& lim = *limits.back();
    lim.threads = static_cast<int>(t);
    if (!no_limits) lim = measure_limits(static_cast<int>(t));
    const double int8_peak = gemm.isa == Isa::avx2 && lim.avx2_int8_gops > 0 ? lim.avx2_int8_gops : lim.int8_gops;
    const double pp_sec_per_token = (int8_peak > 0 ? int8_ops / (int8_peak * 1e9) : 0) +
                                    (lim.fp32_gflops > 0 ? float_ops / (lim.fp32_gflops * 1e9) : 0);
    for (size_t d : n_depth) {
      for (size_t p : n_prompt) {
        if (!p) continue;
        Result r{t, true, p, 0, d, {}, !no_limits && pp_sec_per_token > 0 ? 1.0 / pp_sec_per_token : 0, -1, 0, &lim};
        for (size_t i = 0; i < reps; ++i) {
          if (progress) show_progress(r, i);
          to_depth(d);
          const double t0 = now_seconds();
          llm::forward(model, state, prompt.data() + d, p);
          r.tokens_per_s.push_back(static_cast<double>(p) / (now_seconds() - t0));
        }
        results.push_back(r);
      }
      for (size_t n : n_gen) {
        if (!n) continue;
        double kv_read = 0;  // KV bytes read per token, averaged over the test's positions
        for (size_t j = 0; j < n; ++j) kv_read += static_cast<double>(state.kv_bytes_read(d + j)) / static_cast<double>(n);
        Result r{t, false, n, 0, d, {}, lim.dram_read_gbs > 0 ? lim.dram_read_gbs * 1e9 / (bytes_per_token + kv_read) : 0, -1, 0, &lim};
        std::vector<double> paired, read_gbs;
        std::vector<std::pair<const uint8_t*, size_t>> spans;
        std::vector<const uint8_t*> bufs;
        std::vector<size_t> sizes;
        std::vector<const PackedWeights*> read;
        for (size_t i = 0; i < reps; ++i) {
          if (progress) show_progress(r, i);
          to_depth(d);
          int32_t next = prompt[0];
          double total = 0;
          for (size_t j = 0; j < n; ++j) {
            state.kv_spans(0, spans);  // what this token's attention reads
            const double t0 = now_seconds();
            llm::forward(model, state, &next, 1);
            const double token_s = now_seconds() - t0;
            total += token_s;
            next = next_id(next);
            // Paired with each token: a plain read of the packed weights and of the KV bytes it read, at the same moment.
            llm::decode_weights(model, state, read);
            bufs.clear(), sizes.clear();
            size_t bytes = 0;
            for (const PackedWeights* w : read) bufs.push_back(w->data()), sizes.push_back(w->bytes()), bytes += w->bytes();
            for (const auto& [b, len] : spans) {  // (widened to whole cache lines: the read pass loads aligned lines)
              const auto* a = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(b) / 64 * 64);
              bufs.push_back(a), sizes.push_back((static_cast<size_t>(b - a) + len + 63) / 64 * 64), bytes += len;
            }
            const double tr = read_pass_seconds(ctx.pool(), bufs.data(), sizes.data(), bufs.size());
            paired.push_back(tr / token_s);
            read_gbs.push_back(static_cast<double>(bytes) / tr / 1e9);
          }
          r.tokens_per_s.push_back(static_cast<double>(n) / total);
        }
        r.paired = median(paired);
        r.paired_read_gbs = median(read_gbs);
        results.push_back(r);
      }
      for (const auto& [pp, tg] : pg) {  // no bound, no paired read: a mix of the two
        Result r{t, true, pp, tg, d, {}, 0, -1, 0, &lim};
        for (size_t i = 0; i < reps; ++i) {
          if (progress) show_progress(r, i);
          to_depth(d);
          const double t0 = now_seconds();
          llm::forward(model, state, prompt.data() + d, pp);
          int32_t next = prompt[0];
          for (size_t j = 0; j < tg; ++j) {
            llm::forward(model, state, &next, 1);
            next = next_id(next);
          }
          r.tokens_per_s.push_back(static_cast<double>(pp + tg) / (now_seconds() - t0));
        }
        results.push_back(r);
      }
    }
  }
  print_results(format, mi, results, limits);
  return 0;
}

}  // namespace qmm::cli
