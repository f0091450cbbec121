// qmm bench model: llama-bench's pp<N> (prefill N tokens as one batch from an empty cache)
// and tg<N> (N single-token decodes) for a GGUF model, each also as a fraction of the bound
// the machine limits measured in the same run give:
//   decode  ≤ DRAM bandwidth ÷ packed weight bytes read per token
//   prefill ≤ 1 ÷ Σ (matmul ops per token ÷ peak of the kernel family: int8 or FP32)
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "args.h"
#include "bench_util.h"
#include "bench_verbs.h"
#include "core/error.h"
#include "limits.h"
#include "llm/model.h"
#include "llm_util.h"

namespace qmm::cli {

int bench_model(int argc, char** argv) {
  std::string model_path, kernels, disable;
  size_t n_prompt = 512, n_gen = 128, threads = 1, reps = 1;
  bool no_limits = false, json = false;
  Args args("bench model",
            "Prefill (pp) and decode (tg) tokens/s of a GGUF model, like llama-bench, and the same as fractions of\n"
            "the machine limits measured in this run (decode: DRAM bandwidth / weight bytes per token; prefill:\n"
            "int8 / FP32 peak / matmul ops per token). Tokens are random ids; the KV cache starts empty.",
            argc - 1, argv + 1);
  args.str("-m,--model", &model_path, "FILE", "GGUF model (required)")
      .count("-p,--n-prompt", &n_prompt, "prompt tokens of the prefill test (default 512; 0 skips it)")
      .count("-n,--n-gen", &n_gen, "tokens of the decode test (default 128; 0 skips it)")
      .size("-t,--threads", &threads, "threads (default 1)")
      .size("-r,--repetitions", &reps, "repetitions, the best is reported (default 1)")
      .str("--kernels", &kernels, "LIST", "allow only these ISAs / variants (like QMM_KERNELS)")
      .str("--disable", &disable, "LIST", "exclude these ISAs / variants (like QMM_DISABLE)")
      .flag("--no-limits", &no_limits, "skip measuring the machine limits")
      .flag("--json", &json, "print JSON");
  args.parse();
  if (model_path.empty()) throw UsageError("-m/--model is required");
  if (threads > 1024) throw UsageError("-t must be at most 1024");
  if (n_prompt + n_gen == 0) throw UsageError("nothing to measure (-p 0 -n 0)");

  llm::LoadOptions opt;
  opt.filter = kernel_overrides(kernels, disable, "--kernels/--disable");
  ProgressBar bar("loading");
  opt.progress = [&bar](size_t done, size_t total) { bar.update(done, total); };
  Context ctx(static_cast<int>(threads));
  const llm::Model model = llm::Model::load(model_path, opt, ctx.pool());
  bar.finish();
  const llm::Config& c = model.config();
  const llm::LoadStats& st = model.stats();
  const size_t n_ctx = std::max<size_t>(n_prompt + n_gen, 1);
  if (n_ctx > (size_t{1} << 20)) throw UsageError("-p + -n must be at most 2^20");
  llm::State state(model, n_ctx, std::max<size_t>(n_prompt, 1), ctx);
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(c.n_vocab - 1));
  std::vector<int32_t> prompt(std::max<size_t>(n_prompt, 1));
  for (auto& t : prompt) t = tok(rng);

  // Warm-up: one token (first touch of the scratch, the pool's threads). The peak memory is
  // taken before the limits are measured (they read 512 MiB buffers of their own).
  llm::forward(model, state, prompt.data(), 1);
  const size_t model_rss = peak_rss_bytes();
  MachineLimits lim;
  if (!no_limits) lim = measure_limits(static_cast<int>(threads));
  double pp_s = 0, tg_s = 0, tg_median_s = 0;
  std::vector<double> token_s, paired, paired_read_gbs;  // decode: per token, and read / token time
  token_s.reserve(n_gen);
  std::vector<const uint8_t*> wbufs;
  std::vector<size_t> wsizes;
  for (const PackedWeights* w : model.weights()) wbufs.push_back(w->data()), wsizes.push_back(w->bytes());
  for (size_t r = 0; r < reps; ++r) {
    if (n_prompt) {
      state.reset();
      const double t0 = now_seconds();
      llm::forward(model, state, prompt.data(), n_prompt);
      const double t = now_seconds() - t0;
      pp_s = r == 0 ? t : std::min(pp_s, t);
    }
    if (n_gen) {
      state.reset();
      int32_t next = prompt[0];
      token_s.clear();
      double t = 0;
      for (size_t i = 0; i < n_gen; ++i) {
        const double ti = now_seconds();
        llm::forward(model, state, &next, 1);
        token_s.push_back(now_seconds() - ti);
        t += token_s.back();
        next = static_cast<int32_t>((static_cast<size_t>(next) * 7 + 1) % c.n_vocab);
        // Paired with each token: a plain read of every packed weight, at the same moment.
        const double tr = read_pass_seconds(ctx.pool(), wbufs.data(), wsizes.data(), wbufs.size());
        paired.push_back(tr / token_s.back());
        paired_read_gbs.push_back(static_cast<double>(st.packed_bytes) / tr / 1e9);
      }
      tg_s = r == 0 ? t : std::min(tg_s, t);
      tg_median_s = r == 0 ? median(token_s) : std::min(tg_median_s, median(token_s));
    }
  }

  // Bounds: decode reads every packed weight once per token (plus one embedding row);
  // prefill does matmul_ops per token on the int8 kernels (quantized weights) or FMA (float).
  const double bytes_per_token = static_cast<double>(st.packed_bytes) + static_cast<double>(c.n_embd) * 4;
  const double int8_ops = static_cast<double>(st.int8_ops), float_ops = static_cast<double>(st.matmul_ops - st.int8_ops);
  const double tg_bound = lim.dram_read_gbs > 0 ? lim.dram_read_gbs * 1e9 / bytes_per_token : 0;
  // The int8 peak of the instruction sequence the kernels use: AVX2 kernels (no VNNI) need
  // vpmaddubsw + vpmaddwd + vpaddd per multiply-add, so their peak is the AVX2 figure.
  const Ukernel& gemm = model.layers().front().qkv.parts[0].gemm();
  const Ukernel& gemv = model.layers().front().qkv.parts[0].gemv();
  const double int8_peak = gemm.isa == Isa::avx2 && lim.avx2_int8_gops > 0 ? lim.avx2_int8_gops : lim.int8_gops;
  const double pp_sec_per_token = (int8_peak > 0 ? int8_ops / (int8_peak * 1e9) : 0) +
                                  (lim.fp32_gflops > 0 ? float_ops / (lim.fp32_gflops * 1e9) : 0);
  const double pp_bound = !no_limits && pp_sec_per_token > 0 ? 1.0 / pp_sec_per_token : 0;
  const double pp = n_prompt ? static_cast<double>(n_prompt) / pp_s : 0, tg = n_gen ? static_cast<double>(n_gen) / tg_s : 0;
  const double tg_median = n_gen ? 1.0 / tg_median_s : 0;  // ignores tokens slowed by other processes

  if (json) {
    std::printf("{\"model\": \"%s\", \"threads\": %zu, \"packed_bytes\": %zu, \"gemm\": \"%s\", \"gemv\": \"%s\", ",
                model_path.c_str(), threads, st.packed_bytes, gemm.name, gemv.name);
    std::printf("\"pp\": %zu, \"pp_tokens_per_s\": %.3f, \"pp_bound\": %.3f, \"tg\": %zu, \"tg_tokens_per_s\": %.3f, "
                "\"tg_median_tokens_per_s\": %.3f, \"tg_bound\": %.3f, \"tg_paired_ratio\": %.4f, \"load_seconds\": %.3f, \"pack_seconds\": %.3f, \"peak_rss\": %zu, \"limits\": ",
                n_prompt, pp, pp_bound, n_gen, tg, tg_median, tg_bound, paired.empty() ? 0.0 : median(paired), st.load_seconds, st.pack_seconds, model_rss);
    print_limits(lim, true);
    std::printf("}\n");
    return 0;
  }
  if (!no_limits) print_limits(lim, false);
  std::printf("\nmodel %s: %s, %zu layers, dim %zu, ffn %zu, %zu heads (%zu KV), vocab %zu\n", model_path.c_str(),
              c.arch.c_str(), c.n_layer, c.n_embd, c.n_ff, c.n_head, c.n_head_kv, c.n_vocab);
  std::printf("  weights %s packed (%.1f MB read per decoded token), %.3f GOP per token (%.0f%% on int8 kernels)\n",
              mib(st.packed_bytes).c_str(), bytes_per_token / 1e6, static_cast<double>(st.matmul_ops) / 1e9,
              st.matmul_ops ? 100.0 * int8_ops / static_cast<double>(st.matmul_ops) : 0.0);
  std::printf("  Q/K/V kernels: GEMM %s, GEMV %s\n", gemm.name, gemv.name);
  std::printf("  load %.2f s (repack %.2f s), %zu threads\n\n", st.load_seconds, st.pack_seconds, threads);
  std::printf("  %-8s %12s %14s %9s\n", "test", "tokens/s", "bound tok/s", "of bound");
  auto row = [&](const char* name, size_t n, double v, double bound, const char* limit) {
    if (!n) return;
    char label[32];
    std::snprintf(label, sizeof label, "%s%zu", name, n);
    if (bound > 0) {
      std::printf("  %-8s %12.2f %14.2f %8.1f%%  (%s)\n", label, v, bound, 100.0 * v / bound, limit);
    } else {
      std::printf("  %-8s %12.2f %14s %9s\n", label, v, "-", "-");
    }
  };
  row("pp", n_prompt, pp, pp_bound, "int8 / FP32 peak");
  row("tg", n_gen, tg, tg_bound, "DRAM bandwidth");
  if (n_gen) {  // the median token: wall time less the turns other processes took
    std::printf("  %-8s %12.2f %14s", "tg-med", tg_median, "");
    if (tg_bound > 0) {
      std::printf(" %8.1f%%  (median token time)\n", 100.0 * tg_median / tg_bound);
    } else {
      std::printf(" %9s  (median token time)\n", "-");
    }
  }
  if (!paired.empty()) {
    std::printf("  %-8s %12s %14s %8.1f%%  (of a plain read of the packed weights, timed after each token;\n"
                "  %-8s %12s %14s %9s   median of %zu pairs, the read ran at %.2f GB/s)\n",
                "tg-pair", "", "", 100.0 * median(paired), "", "", "", "", paired.size(), median(paired_read_gbs));
  }
  std::printf("  peak RSS %s (model, KV cache of %zu tokens and scratch)\n", mib(model_rss).c_str(), n_ctx);
  return 0;
}

}  // namespace qmm::cli
