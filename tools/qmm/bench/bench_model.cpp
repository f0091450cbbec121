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
// The deepest depth is prefilled once per run (or read from --depth-file) and restored for every
// test, repetition and thread count (llm::DepthFill). Each decode row also gives its effective
// bandwidth, (weight + KV bytes read per token) × tokens/s, and its ratio to the depth-0 row of
// the same thread count and -n: how much of the speed the attention's reads keep at depth.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "qmm/cli/args.h"
#include "bench_util.h"
#include "bench_verbs.h"
#include "core/error.h"
#include "qmm/cli/json.h"
#include "limits.h"
#include "llm/bench_runs.h"
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
  double kv_read = 0;                // tg: KV bytes read per token
  double effective_gbs = 0;          // tg: (weight + KV bytes per token) × mean tokens/s, GB/s
  double of_depth0 = -1;             // tg at depth: effective_gbs ÷ the depth-0 row's (same threads, -n); -1: none
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
  std::string depth_fill{};  // how the depths were filled ("" without -d)
  std::map<size_t, std::string> tuned_gemv{};  // threads -> the first weight's decode GEMV, as tuned
  const std::string& gemv_at(size_t threads) const {
    const auto it = tuned_gemv.find(threads);
    return it == tuned_gemv.end() ? gemv : it->second;
  }
  // The header's GEMV: the one that decoded, per thread count where tuning chose differently.
  std::string gemv_line() const {
    if (tuned_gemv.empty()) return gemv;
    const std::string& first = tuned_gemv.begin()->second;
    if (std::all_of(tuned_gemv.begin(), tuned_gemv.end(), [&](const auto& e) { return e.second == first; })) return first;
    std::string line;
    for (const auto& [t, g] : tuned_gemv) line += (line.empty() ? "" : ", ") + g + " (" + std::to_string(t) + (t == 1 ? " thread)" : " threads)");
    return line;
  }
};

std::string result_json(const ModelInfo& mi, const Result& r) {
  const double avg = mean(r.tokens_per_s), sd = stddev(r.tokens_per_s);
  JsonObject o;
  o.str("model", mi.path).str("arch", mi.arch).integer("packed_bytes", static_cast<long long>(mi.packed_bytes));
  o.str("gemm", mi.gemm).str("gemv", mi.gemv_at(r.threads)).integer("threads", static_cast<long long>(r.threads));
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
  if (!r.prefill) {
    o.num("kv_read_bytes", r.kv_read, 0).num("effective_gbs", r.effective_gbs, 3).measured("effective_of_depth0", r.of_depth0, r.of_depth0 >= 0);
  }
  if (!mi.depth_fill.empty()) o.str("depth_fill", mi.depth_fill);
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
              mi.load_seconds, mi.pack_seconds, mib(mi.peak_rss).c_str(), mi.gemm.c_str(), mi.gemv_line().c_str());
  std::printf("  KV cache: K %s, V %s, %s for %zu positions (%.1f KiB per position)\n\n", llm::kv_type_name(mi.kv.k),
              llm::kv_type_name(mi.kv.v), mib(mi.kv_bytes).c_str(), mi.kv_positions, static_cast<double>(mi.kv_per_token) / 1024);
  if (!mi.depth_fill.empty()) std::printf("  depth: %s\n\n", mi.depth_fill.c_str());
  std::printf("| threads | test | t/s | bound t/s | of bound | paired | eff GB/s | of d0 |\n");
  std::printf("| ------: | ---: | --: | --------: | -------: | -----: | -------: | ----: |\n");
  std::string problems;
  for (const Result& r : results) {
    const double avg = mean(r.tokens_per_s), sd = stddev(r.tokens_per_s);
    const std::string ts = std::isfinite(sd) ? fmt("%.2f", avg) + " ± " + fmt("%.2f", sd) : fmt("%.2f", avg);
    const bool implausible = r.paired >= 0 && !paired_plausible(r.paired);
    if (implausible) {
      problems += "  " + test_name(r) + ", " + std::to_string(r.threads) + " thread(s): paired " +
                  fmt("%.1f%%", 100.0 * r.paired) + " is " + kPairedProblem + "\n";
    }
    std::printf("| %7zu | %4s | %s | %s | %s | %s | %s | %s |\n", r.threads, test_name(r).c_str(), ts.c_str(),
                r.bound > 0 ? fmt("%.2f", r.bound).c_str() : "-", r.bound > 0 ? fmt("%.1f%%", 100.0 * avg / r.bound).c_str() : "-",
                implausible ? "no result*" : r.paired >= 0 ? fmt("%.1f%%", 100.0 * r.paired).c_str() : "-",
                r.prefill ? "-" : fmt("%.2f", r.effective_gbs).c_str(), r.of_depth0 >= 0 ? fmt("%.1f%%", 100.0 * r.of_depth0).c_str() : "-");
  }
  if (!problems.empty()) std::printf("\n* a measurement problem, not a result:\n%s", problems.c_str());
  std::printf("\n%zu repetition%s per test (t/s: mean ± standard deviation). bound: the limits above (decode: the\n"
              "weights and the KV bytes read per token; MoE: the chosen experts only); paired: the decode's share of a\n"
              "plain read of the packed weights the token read and the attended KV bytes timed right after it (median).\n"
              "@ dN: N positions cached first. eff GB/s: (weight + KV bytes read per token) x t/s; of d0: that ÷ the\n"
              "depth-0 tg row's of the same threads and tokens.\n",
              mi.reps, mi.reps == 1 ? "" : "s");
}

// --trace: one test's matmuls over its repetitions, against the time the test timed (a decode's
// paired read passes run between its tokens and are not part of it).
class Traced {
 public:
  Traced(bool on, const Result& r) : on_(on) {
    if (!on_) return;
    stage_ = test_name(r) + ", " + std::to_string(r.threads) + " thread" + (r.threads == 1 ? "" : "s");
    trace_.begin(stage_.c_str());
  }
  void end(const Result& r) {
    if (!on_) return;
    double timed = 0;
    for (double tps : r.tokens_per_s) timed += tps > 0 ? static_cast<double>(r.n + r.then_gen) / tps : 0;
    trace_.end(timed);
  }

 private:
  bool on_;
  std::string stage_;
  MatmulTrace trace_;
};

// The verb's options, parsed and checked.
struct Options {
  std::string model_path, format = "md", depth_file;
  std::vector<size_t> n_prompt{512}, n_gen{128}, n_depth{0}, threads;
  std::vector<std::pair<size_t, size_t>> pg;  // -pg PP,TG
  size_t reps = 5;
  bool no_limits = false, no_tune = false, progress = false, trace = false;
  llm::KvTypes kv;
  llm::LoadOptions load;
  size_t max_p = 0, max_n = 0, max_pg = 0, max_d = 0;  // the most positions each kind of test fills
};

Options parse_options(int argc, char** argv) {
  Options o;
  std::string kernels, disable, convert;
  KvFlags kv_flags;
  bool json = false;
  std::vector<std::string> pg_args, models;
  Args args("bench model",
            "Prefill (pp) and decode (tg) tokens/s of a GGUF model, like llama-bench: every combination of the -p,\n"
            "-n and -t lists, -r repetitions each (mean ± standard deviation), and the same as fractions of the\n"
            "machine limits measured in this run (decode: DRAM bandwidth / weight bytes per token; prefill:\n"
            "int8 / FP32 peak / matmul ops per token). Tokens are random ids; the KV cache starts empty, or filled\n"
            "to each -d depth first.",
            argc - 1, argv + 1);
  args.strs("-m,--model", &models, "FILE", "GGUF model (required; one per run)")
      .counts("-p,--n-prompt", &o.n_prompt, 0, "prompt tokens of the prefill tests (default 512; 0 skips it)")
      .counts("-n,--n-gen", &o.n_gen, 0, "tokens of the decode tests (default 128; 0 skips it)")
      .counts("-d,--n-depth", &o.n_depth, 0, "KV cache positions filled before each test (default 0); the deepest is prefilled once and restored for every test")
      .str("--depth-file", &o.depth_file, "FILE", "a slot file of the deepest -d fill: read when it exists, else written after the prefill (same model, -ctk/-ctv)")
      .strs("-pg", &pg_args, "PP,TG", "also a prompt of PP tokens then TG decodes, timed together as (PP + TG) / time (repeatable)")
      .counts("-t,--threads", &o.threads, 1, "thread counts (default: as qmm run, all cores; one for models under 16 MiB)")
      .size("-r,--repetitions", &o.reps, "repetitions of each test (default 5)")
      .choice("-o,--output", &o.format, {"md", "csv", "json", "jsonl"}, "output format (default md)")
      .str("--kernels", &kernels, "LIST", "allow only these ISAs / variants (like QMM_KERNELS)")
      .str("--disable", &disable, "LIST", "exclude these ISAs / variants (like QMM_DISABLE)")
      .choice("--convert", &convert, type_names([](const TypeInfo& t) { return t.native; }),
              "re-quantize every weight at load, as qmm run --convert")
      .flag("--no-limits", &o.no_limits, "skip measuring the machine limits")
      .flag("--progress", &o.progress, "print each test and repetition to stderr as it starts")
      .flag("--trace", &o.trace, "print each test's matmuls with their time, and the time outside them (attention, norms...)")
      .flag("--no-tune", &o.no_tune, "keep the default decode plans (like QMM_TUNE=0); else tuned per thread count, as loads do")
      .no_effect("-ngl,--n-gpu-layers", "N", "it runs on the CPU")
      .no_effect("-fa,--flash-attn", "0|1", "its attention is its own CPU kernel")
      .no_effect("-mmp,--mmap", "0|1", "it maps the file only to pack the weights, then releases it")
      .flag("--json", &json, "the same as -o json");
  kv_flags.add_to(args);
  args.parse();
  if (json) o.format = "json";
  if (models.empty()) throw UsageError("-m/--model is required");
  if (models.size() > 1) {  // llama-bench measures each; refused rather than measuring only the last
    throw UsageError("one -m per run (" + std::to_string(models.size()) + " given): run qmm bench model once for each model");
  }
  o.model_path = models[0];
  if (o.threads.empty()) o.threads.push_back(default_threads(o.model_path));
  std::vector<size_t> distinct;  // -t 1,2,1: each count once, in the order given
  for (size_t t : o.threads) {
    if (std::find(distinct.begin(), distinct.end(), t) == distinct.end()) distinct.push_back(t);
  }
  o.threads = distinct;
  for (size_t t : o.threads) {
    if (t > 1024) throw UsageError("-t must be at most 1024");
  }
  if (o.reps > 1000) throw UsageError("-r must be at most 1000");
  for (const std::string& a : pg_args) {
    size_t pp = 0, tg = 0, used = 0;
    const bool ok = std::sscanf(a.c_str(), "%zu,%zu%zn", &pp, &tg, &used) == 2 && used == a.size() && pp > 0 && tg > 0;
    if (!ok) throw UsageError("-pg takes PP,TG (two positive numbers, as 512,128), not '" + a + "'");
    o.pg.emplace_back(pp, tg);
  }
  o.max_p = *std::max_element(o.n_prompt.begin(), o.n_prompt.end());
  o.max_n = *std::max_element(o.n_gen.begin(), o.n_gen.end());
  for (const auto& [pp, tg] : o.pg) o.max_p = std::max(o.max_p, pp), o.max_pg = std::max(o.max_pg, pp + tg);
  if (o.max_p + o.max_n == 0) throw UsageError("nothing to measure (-p 0 -n 0)");
  o.max_d = *std::max_element(o.n_depth.begin(), o.n_depth.end());
  if (std::max(o.max_p + o.max_n, o.max_pg) > (size_t{1} << 20) || o.max_d > (size_t{1} << 20)) {
    throw UsageError("-p + -n, -pg's PP + TG and -d must be at most 2^20");
  }
  if (!o.depth_file.empty() && o.max_d == 0) throw UsageError("--depth-file needs a -d depth above 0");
  o.kv = kv_flags.types();
  o.load.filter = kernel_overrides(kernels, disable, "--kernels/--disable");
  if (!convert.empty()) o.load.convert_to = convert_type(convert);
  return o;
}

}  // namespace

int bench_model(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  llm::LoadOptions opt = o.load;
  ProgressBar bar("loading");
  if (o.format == "md") opt.progress = [&bar](size_t done, size_t total) { bar.update(done, total); };
  Context load_ctx(static_cast<int>(*std::max_element(o.threads.begin(), o.threads.end())));
  llm::Model model = llm::Model::load(o.model_path, opt, load_ctx.pool());
  bar.finish();
  const llm::Config& c = model.config();
  const llm::LoadStats& st = model.stats();
  const llm::TokenCost cost = llm::token_cost(model);
  const Ukernel& gemm = model.layers().front().qkv.parts[0].gemm();
  const Ukernel& gemv = model.layers().front().qkv.parts[0].gemv();
  ModelInfo mi{o.model_path, std::filesystem::path(o.model_path).filename().string(), c.arch, gemm.name, gemv.name,
               st.packed_bytes, static_cast<size_t>(cost.weight_bytes), o.reps, st.load_seconds, st.pack_seconds, 0, o.kv};

  std::vector<Result> results;
  std::vector<std::unique_ptr<MachineLimits>> limits;
  llm::DepthFill fill{o.max_d, o.depth_file};
  const size_t n_batch = std::max<size_t>({o.max_p, std::min<size_t>(o.max_d, 512), 1});
  const size_t tests_per_thread_count =
      o.n_depth.size() * (static_cast<size_t>(std::count_if(o.n_prompt.begin(), o.n_prompt.end(), [](size_t p) { return p > 0; })) +
                          static_cast<size_t>(std::count_if(o.n_gen.begin(), o.n_gen.end(), [](size_t n) { return n > 0; })) + o.pg.size());
  auto show_progress = [&](const Result& r, size_t rep) {  // llama-bench's --progress, on stderr
    if (!o.progress) return;
    std::fprintf(stderr, "qmm bench model: test %zu/%zu: %s, %zu thread%s, repetition %zu/%zu\n", results.size() + 1,
                 tests_per_thread_count * o.threads.size(), test_name(r).c_str(), r.threads, r.threads == 1 ? "" : "s",
                 rep + 1, o.reps);
  };
  for (size_t t : o.threads) {
    Context ctx(static_cast<int>(t));
    if (!o.no_tune && tune_enabled_by_env()) model.tune(ctx.pool(), opt.filter, TuneOptions{});
    mi.tuned_gemv[t] = model.layers().front().qkv.parts[0].gemv().name;
    llm::State state(model, o.max_d + std::max<size_t>({o.max_p, o.max_n, o.max_pg, 1}), n_batch, ctx, 1, o.kv);
    mi.kv_bytes = state.kv_bytes(), mi.kv_positions = state.n_ctx(), mi.kv_per_token = llm::State::kv_bytes_per_token(c, o.kv);
    llm::BenchRuns runs(model, state, o.max_d + o.max_p, n_batch, &fill);
    // Warm-up first; the peak memory is taken before any limits are measured (they read 512 MiB
    // buffers of their own).
    runs.warm_up();
    if (limits.empty()) mi.peak_rss = peak_rss_bytes();
    limits.push_back(std::make_unique<MachineLimits>());
    MachineLimits& lim = *limits.back();
    lim.threads = static_cast<int>(t);
    if (!o.no_limits) lim = measure_limits(static_cast<int>(t));
    // The int8 peak of the instruction sequence the kernels use: AVX2 kernels (no VNNI) need
    // vpmaddubsw + vpmaddwd + vpaddd per multiply-add, so their peak is the AVX2 figure.
    const double int8_peak = gemm.isa == Isa::avx2 && lim.avx2_int8_gops > 0 ? lim.avx2_int8_gops : lim.int8_gops;
    const double pp_bound = o.no_limits ? 0 : llm::prefill_bound(cost, int8_peak, lim.fp32_gflops);
    for (size_t d : o.n_depth) {
      if (o.trace && d) runs.to_depth(d);  // the depth's fill (its prefill's matmuls) outside every trace
      for (size_t p : o.n_prompt) {
        if (!p) continue;
        Result r{t, true, p, 0, d, {}, pp_bound, -1, 0, &lim};
        Traced traced(o.trace, r);
        for (size_t i = 0; i < o.reps; ++i) show_progress(r, i), r.tokens_per_s.push_back(runs.prefill(d, p));
        traced.end(r);
        results.push_back(r);
      }
      for (size_t n : o.n_gen) {
        if (!n) continue;
        const double kv_read = runs.kv_read_per_token(d, n);
        Result r{t, false, n, 0, d, {}, llm::decode_bound(cost.weight_bytes + kv_read, lim.dram_read_gbs), -1, 0, &lim, kv_read};
        std::vector<double> paired, read_gbs;
        Traced traced(o.trace, r);
        for (size_t i = 0; i < o.reps; ++i) {
          show_progress(r, i);
          const llm::BenchRuns::Decode run = runs.decode(d, n, read_pass_seconds);
          r.tokens_per_s.push_back(run.tokens_per_s);
          paired.insert(paired.end(), run.paired.begin(), run.paired.end());
          read_gbs.insert(read_gbs.end(), run.read_gbs.begin(), run.read_gbs.end());
        }
        traced.end(r);
        r.paired = median(paired);
        r.paired_read_gbs = median(read_gbs);
        r.effective_gbs = llm::effective_gbs(cost.weight_bytes, kv_read, mean(r.tokens_per_s));
        results.push_back(r);
      }
      for (const auto& [pp, tg] : o.pg) {  // no bound, no paired read: a mix of the two
        Result r{t, true, pp, tg, d, {}, 0, -1, 0, &lim};
        Traced traced(o.trace, r);
        for (size_t i = 0; i < o.reps; ++i) show_progress(r, i), r.tokens_per_s.push_back(runs.prefill_decode(d, pp, tg));
        traced.end(r);
        results.push_back(r);
      }
    }
  }
  for (Result& r : results) {  // each decode row against the depth-0 one of its thread count and -n
    for (const Result& z : results) {
      if (!r.prefill && r.depth > 0 && !z.prefill && z.depth == 0 && z.threads == r.threads && z.n == r.n && z.effective_gbs > 0) r.of_depth0 = r.effective_gbs / z.effective_gbs;
    }
  }
  if (fill.positions > 0) {
    mi.depth_fill = "positions 0.." + std::to_string(fill.positions - 1) +
                    (fill.from_file ? " read from " + fill.file
                                    : " prefilled once (" + fmt("%.1f", fill.seconds) + " s, " + std::to_string(fill.threads) + " thread" +
                                          (fill.threads == 1 ? "" : "s") + ", batches of " + std::to_string(n_batch) + ")") +
                    ", restored for every test, repetition and thread count";
  } else if (o.max_d > 0) {
    mi.depth_fill = "prefilled for each test (a sliding-window cache is not copied)";
  }
  print_results(o.format, mi, results, limits);
  return 0;
}

}  // namespace qmm::cli
