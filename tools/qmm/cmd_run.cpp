// qmm run: generate text with a GGUF Llama-family model, llama-cli style. The prompt is
// prefilled as one batch (GEMM kernels), then tokens are decoded one at a time (GEMV kernels)
// and streamed to stdout; timings and peak memory go to stderr at the end.
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "bench_util.h"
#include "core/error.h"
#include "llm/model.h"
#include "llm/sampler.h"
#include "llm/tokenizer.h"
#include "llm_util.h"
#include "verbs.h"

namespace qmm::cli {

int cmd_run(int argc, char** argv) {
  std::string model_path, prompt, kernels, disable, convert;
  long long n_predict = -1, seed = -1;
  size_t threads = 0, n_ctx = 0, n_batch = 512, top_k = 40, last_n = 64;
  double temp = 0.8, top_p = 0.95, min_p = 0.05, repeat_penalty = 1.0;
  bool trace = false;
  Args args("run",
            "Generate text with a GGUF Llama-family model: the prompt is prefilled as one batch, then tokens are\n"
            "decoded one at a time and streamed. Timings and peak memory are printed to stderr at the end.",
            argc - 1, argv + 1);
  args.str("-m,--model", &model_path, "FILE", "GGUF model (required)")
      .str("-p,--prompt", &prompt, "TEXT", "prompt (default: empty, start from BOS)")
      .integer("-n,--n-predict", &n_predict, "tokens to generate (default -1: until EOS or the context is full)")
      .count("-t,--threads", &threads, "threads (default 0: all cores; one for models under 16 MiB)")
      .count("-c,--ctx-size", &n_ctx, "context size in tokens (default 0: the model's, at most 4096)")
      .size("-b,--batch-size", &n_batch, "largest prefill batch (default 512)")
      .real("--temp", &temp, "temperature; 0 = greedy (default 0.8)")
      .size("--top-k", &top_k, "top-k (default 40)")
      .real("--top-p", &top_p, "top-p; 1 = off (default 0.95)")
      .real("--min-p", &min_p, "min-p; 0 = off (default 0.05)")
      .real("--repeat-penalty", &repeat_penalty, "repetition penalty; 1 = off (default 1.0)")
      .count("--repeat-last-n", &last_n, "tokens the penalty looks back on (default 64)")
      .integer("-s,--seed", &seed, "random seed (default -1: random)")
      .str("--kernels", &kernels, "LIST", "allow only these ISAs / variants (like QMM_KERNELS)")
      .str("--disable", &disable, "LIST", "exclude these ISAs / variants (like QMM_DISABLE)")
      .choice("--convert", &convert, {"q4_0", "q8_0", "f16", "f32"},
              "re-quantize every weight at load (q4_0/q8_0 only where k % 32 == 0)")
      .flag("--trace", &trace, "print the packers and microkernels of each stage (load, prefill, decode)");
  args.parse();
  if (model_path.empty()) throw UsageError("-m/--model is required");
  if (threads > 1024) throw UsageError("-t must be at most 1024");
  if (threads == 0) {  // a tiny model's matmuls are shorter than waking the other threads
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(model_path, ec);
    threads = !ec && bytes < (16u << 20) ? 1 : std::max(1u, std::thread::hardware_concurrency());
  }
  if (n_predict < -1) throw UsageError("-n must be -1 or more");
  if (!(temp >= 0)) throw UsageError("--temp must be >= 0");
  if (!(top_p > 0 && top_p <= 1)) throw UsageError("--top-p must be in (0, 1]");
  if (!(min_p >= 0 && min_p <= 1)) throw UsageError("--min-p must be in [0, 1]");
  if (!(repeat_penalty > 0)) throw UsageError("--repeat-penalty must be > 0");

  llm::LoadOptions opt;
  opt.filter = kernel_overrides(kernels, disable, "--kernels/--disable");
  if (!convert.empty()) {
    WeightType t;
    parse_type(convert.c_str(), &t);
    opt.convert_to = t;
  }
  ProgressBar bar("loading");
  if (trace) {
    std::fprintf(stderr, "trace load: %s\n", model_path.c_str());
    opt.trace = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  } else {
    opt.progress = [&bar](size_t done, size_t total) { bar.update(done, total); };
  }
  Context ctx(static_cast<int>(threads));
  const llm::Model model = llm::Model::load(model_path, opt, ctx.pool());
  bar.finish();
  const llm::Config& c = model.config();
  const llm::Tokenizer tok = llm::Tokenizer::from_gguf(model.file());
  if (tok.n_vocab() > c.n_vocab) {
    fail(Status::io, model_path + ": the tokenizer has " + std::to_string(tok.n_vocab()) + " tokens, the model " +
                         std::to_string(c.n_vocab));
  }
  if (trace) std::fprintf(stderr, "  tokenizer: %s\n", tok.description().c_str());

  // Prompt -> tokens; an empty prompt starts from BOS.
  std::vector<int32_t> tokens = tok.encode(prompt, tok.add_bos());
  if (tokens.empty()) {
    if (tok.bos() < 0) throw UsageError("the prompt is empty and the model has no BOS token");
    tokens.push_back(tok.bos());
  }
  if (n_ctx == 0) n_ctx = std::min<size_t>(c.n_ctx_train, 4096);
  if (tokens.size() >= n_ctx) {
    throw UsageError("the prompt is " + std::to_string(tokens.size()) + " tokens, the context holds " +
                     std::to_string(n_ctx) + " (-c)");
  }
  llm::State state(model, n_ctx, n_batch, ctx);
  llm::SamplerParams sp;
  sp.temperature = static_cast<float>(temp);
  sp.top_k = static_cast<int>(std::min<size_t>(top_k, 1u << 30));
  sp.top_p = static_cast<float>(top_p);
  sp.min_p = static_cast<float>(min_p);
  sp.repeat_penalty = static_cast<float>(repeat_penalty);
  sp.repeat_last_n = last_n;
  sp.seed = seed >= 0 ? static_cast<uint64_t>(seed) : std::random_device{}();
  llm::Sampler sampler(sp, tok.n_vocab());

  // Prefill: the prompt in batches of up to n_batch tokens (one batch unless it is longer).
  MatmulTrace mt;
  if (trace) mt.begin("prefill");
  const double t_prefill = now_seconds();
  const float* logits = nullptr;
  for (size_t i = 0; i < tokens.size(); i += state.n_batch()) {
    logits = llm::forward(model, state, tokens.data() + i, std::min(state.n_batch(), tokens.size() - i));
  }
  const double prefill_s = now_seconds() - t_prefill;
  if (trace) mt.end();
  std::fputs(prompt.c_str(), stdout);
  std::fflush(stdout);

  // Decode: sample, print, feed back, until EOS, -n tokens or a full context.
  if (trace) mt.begin("decode");
  llm::TextStream text(tok, prompt.empty());
  size_t generated = 0, decoded = 0;
  const double t_decode = now_seconds();
  while (n_predict < 0 || generated < static_cast<size_t>(n_predict)) {
    const int32_t next = sampler.sample(logits, tokens);
    if (tok.is_end_of_generation(next)) break;
    tokens.push_back(next);
    ++generated;
    std::fputs(text.push(next).c_str(), stdout);
    std::fflush(stdout);
    if (state.pos() >= state.n_ctx() || (n_predict >= 0 && generated == static_cast<size_t>(n_predict))) break;
    logits = llm::forward(model, state, &next, 1);
    ++decoded;
  }
  const double decode_s = now_seconds() - t_decode;
  std::fputs(text.flush().c_str(), stdout);
  std::fputs("\n", stdout);
  std::fflush(stdout);
  if (trace) mt.end();

  // Statistics.
  const llm::LoadStats& st = model.stats();
  std::fprintf(stderr, "\nmodel:   %s, %zu layers, dim %zu, %zu heads (%zu KV), vocab %zu; %s\n", c.arch.c_str(), c.n_layer,
               c.n_embd, c.n_head, c.n_head_kv, c.n_vocab, tok.kind() == llm::Tokenizer::Kind::spm ? "SentencePiece" : "BPE");
  std::fprintf(stderr, "load:    %.3f s (repack %.3f s); packed weights %s, file %s (mapped, released after packing)\n",
               st.load_seconds, st.pack_seconds, mib(st.packed_bytes).c_str(), mib(st.file_bytes).c_str());
  std::fprintf(stderr, "prefill: %zu tokens in %.3f s = %.1f tokens/s\n", tokens.size() - generated, prefill_s,
               static_cast<double>(tokens.size() - generated) / prefill_s);
  std::fprintf(stderr, "decode:  %zu tokens in %.3f s = %.1f tokens/s (%zu generated)\n", decoded, decode_s,
               decoded ? static_cast<double>(decoded) / decode_s : 0.0, generated);
  std::fprintf(stderr, "memory:  peak RSS %s (KV cache + scratch %s), %zu threads\n", mib(peak_rss_bytes()).c_str(),
               mib(state.bytes()).c_str(), threads);
  return 0;
}

}  // namespace qmm::cli
