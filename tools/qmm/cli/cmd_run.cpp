// qmm run: generate text with a GGUF Llama-family model, llama-cli style, on the batched
// generator (src/llm/generate.h) with one slot. The prompt (-p TEXT, -p - for stdin, or
// -f FILE) is prefilled in batches of -b tokens (GEMM kernels), then tokens are decoded one at
// a time (GEMV kernels) and streamed to stdout; timings and peak memory go to stderr at the end.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "bounded_read.h"
#include "core/error.h"
#include "llm/generate.h"
#include "text/grammar.h"
#include "llm/ops.h"
#include "llm_session.h"
#include "llm_util.h"
#include "verbs.h"

namespace qmm::cli {
namespace {

// Ctrl-C stops the generation (the statistics are still printed); a second one ends qmm.
std::atomic<bool> g_interrupted{false};
void stop_generation(int) { g_interrupted.store(true); }

// ANSI colours of --color: the prompt, and qmm's own messages between the texts.
constexpr const char* kPromptColor = "\x1b[33m";
constexpr const char* kNoteColor = "\x1b[2m";
constexpr const char* kReset = "\x1b[0m";

// -p TEXT (escapes processed unless --no-escape), -p - (standard input) or -f FILE, as bytes.
std::string read_prompt(const std::string& prompt, const std::string& file, bool escape) {
  if (!file.empty() && !prompt.empty()) throw UsageError("give -p or -f, not both");
  if (prompt != "-" && file.empty()) return escape ? process_escapes(prompt) : prompt;
  if (file.empty() && fcntl(STDIN_FILENO, F_GETFD) < 0) throw UsageError("-p -: standard input is closed");
  std::ifstream f;
  if (!file.empty()) {
    if (std::filesystem::is_directory(file)) throw UsageError("-f " + file + ": is a directory, not a file");
    f.open(file, std::ios::binary);
    if (!f) fail(Status::io, "cannot open " + file);
  }
  std::istream& in = file.empty() ? std::cin : f;
  return read_all_bounded(in, kMaxPromptBytes, file.empty() ? std::string("the prompt on standard input") : file);
}

// --grammar TEXT or --grammar-file FILE (llama-cli's): the GBNF the output follows, compiled.
std::shared_ptr<const llm::Grammar> read_grammar(const std::string& text, const std::string& file) {
  if (!text.empty() && !file.empty()) throw UsageError("give --grammar or --grammar-file, not both");
  std::string gbnf = text;
  if (!file.empty()) {
    if (std::filesystem::is_directory(file)) throw UsageError("--grammar-file " + file + ": is a directory, not a file");
    std::ifstream f(file, std::ios::binary);
    if (!f) fail(Status::io, "cannot open " + file);
    gbnf = read_all_bounded(f, llm::GrammarLimits{}.max_bytes, "--grammar-file " + file);
  }
  if (gbnf.empty()) return nullptr;
  try {
    return llm::Grammar::parse(gbnf);
  } catch (const Error& e) {
    throw UsageError(std::string(file.empty() ? "--grammar: " : "--grammar-file " + file + ": ") + e.what());
  }
}

// llama-cli's conversation mode, `qmm run -cnv`: qmm chat, with -p as the system prompt.
int run_conversation(int argc, char** argv) {
  std::vector<std::string> args{"chat"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-no-cnv" || a == "--no-conversation") throw UsageError("give -cnv or -no-cnv, not both");
    if (a == "-cnv" || a == "--conversation") continue;
    args.push_back(a == "-p" || a == "--prompt" ? "-sys" : a);
  }
  std::vector<char*> ptrs;
  for (std::string& a : args) ptrs.push_back(a.data());
  return cmd_chat(static_cast<int>(ptrs.size()), ptrs.data());
}

}  // namespace

int cmd_run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-cnv") || !std::strcmp(argv[i], "--conversation")) return run_conversation(argc, argv);
  }
  ModelFlags mf;
  SamplingFlags sf;
  std::string prompt, prompt_file, system, color = "auto", grammar, grammar_file;
  std::vector<std::string> reverse_prompts;
  ContextFlags cf;
  bool escape = true, no_escape = false, ignore_eos = false, no_cnv = false, verbose_prompt = false, special = false,
       no_display_prompt = false;
  long long n_predict = -1;
  Args args("run",
            "Generate text with a GGUF Llama-family model: the prompt is prefilled as one batch, then tokens are\n"
            "decoded one at a time and streamed. Timings and peak memory are printed to stderr at the end.",
            argc - 1, argv + 1);
  mf.add_to(args);
  args.str("-p,--prompt", &prompt, "TEXT", "prompt; - reads it from standard input (default: empty, start from BOS)")
      .str("-f,--file", &prompt_file, "FILE", "read the prompt from FILE")
      .integer("-n,--n-predict,--predict", &n_predict, "tokens to generate (default -1: until EOS or the context is full)")
      .strs("-r,--reverse-prompt", &reverse_prompts, "TEXT", "stop after TEXT is generated (repeatable)")
      .flag("-cnv,--conversation", &no_cnv, "conversation mode: qmm chat, with -p as the system prompt")
      .flag("-no-cnv,--no-conversation", &no_cnv, "no conversation mode (qmm run never is; llama-cli's default is)")
      .str("-sys,--system-prompt", &system, "TEXT", "system prompt: only with -cnv (qmm chat)")
      .flag("-v,--verbose,--verbose-prompt", &verbose_prompt, "print the prompt's tokens (ids and pieces) before the text")
      .flag("-sp,--special", &special, "show the special (control) tokens the model generates")
      .flag("--no-display-prompt", &no_display_prompt, "print only the generated text, not the prompt")
      .no_effect("--keep", "N", "the context is not shifted: generation stops when it is full")
      .flag("-e,--escape", &escape, "process \\n, \\t, \\\\, \\\", \\' and \\xHH in -p TEXT (the default)")
      .flag("--no-escape", &no_escape, "take -p TEXT literally")
      .flag("--ignore-eos", &ignore_eos, "generate through end-of-generation tokens (benchmarks)")
      .str("--grammar", &grammar, "GBNF", "constrain the output to this GBNF grammar (llama.cpp's format)")
      .str("--grammar-file", &grammar_file, "FILE", "read the GBNF grammar from FILE")
      .optional_choice("-co,--color", &color, {"on", "off", "auto"}, "on",
                       "colour the prompt apart from the generated text (default auto: on a terminal, unless NO_COLOR "
                       "is set; the flag alone: on)");
  cf.add_to(args);
  sf.add_to(args);
  args.parse();
  if (n_predict < -1) throw UsageError("-n must be -1 or more");
  if (!system.empty()) throw UsageError("-sys is a system prompt, for conversation mode: add -cnv (or use qmm chat)");
  for (const std::string& r : reverse_prompts) {
    if (r.empty()) throw UsageError("-r: the reverse prompt is empty");
  }
  const llm::SamplerParams sampling = sf.params();
  prompt = read_prompt(prompt, prompt_file, escape && !no_escape);
  const std::shared_ptr<const llm::Grammar> constraint = read_grammar(grammar, grammar_file);
  const bool colored = use_color(color, isatty(STDOUT_FILENO));
  auto note = [&](const std::string& msg) {  // a message of qmm's, on stderr, after the streamed text
    std::fflush(stdout);
    std::fprintf(stderr, "\n%s%s%s\n", colored ? kNoteColor : "", msg.c_str(), colored ? kReset : "");
  };

  const LoadedModel lm = LoadedModel::load(mf);
  const llm::Tokenizer& tok = *lm.tok;
  std::vector<int32_t> tokens = llm::prompt_tokens(tok, prompt);
  cf.n_ctx = lm.context(cf.n_ctx, cf.kv.types());
  if (tokens.size() >= cf.n_ctx) {
    throw UsageError("the prompt is " + std::to_string(tokens.size()) + " tokens, the context holds " +
                     std::to_string(cf.n_ctx) + " (-c)");
  }
  if (verbose_prompt) {  // llama-cli's --verbose-prompt
    std::fprintf(stderr, "prompt: %zu tokens\n", tokens.size());
    for (const int32_t t : tokens) std::fprintf(stderr, "%6d -> '%s'\n", t, tok.text(t).c_str());
  }
  llm::Generator gen(*lm.model, tok, *lm.ctx, {1, cf.n_ctx, cf.n_batch, 1, cf.kv.types()});
  // The seed, so that a sampled text can be made again (-s).
  std::fprintf(stderr, "sampling: seed %llu, temp %.2f, top-k %d, top-p %.2f, min-p %.2f\n",
               static_cast<unsigned long long>(sampling.seed), static_cast<double>(sampling.temperature), sampling.top_k,
               static_cast<double>(sampling.top_p), static_cast<double>(sampling.min_p));
  struct sigaction sa {};
  sa.sa_handler = stop_generation;
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C ends the process at once
  sigaction(SIGINT, &sa, nullptr);

  // Prefill until the first token is sampled, then decode: the trace shows each stage's matmuls.
  MatmulTrace mt;
  if (mf.trace) std::fprintf(stderr, "trace attention: %s\n", llm::attention_trace(cf.kv.types()).c_str());
  if (mf.trace) mt.begin("prefill");
  bool first = true;
  size_t shown = 0;
  auto print_prompt = [&] {
    if (no_display_prompt) return;
    std::fputs(colored ? kPromptColor : "", stdout);
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);  // all of it: -p 'a\x00b' holds a NUL
    std::fputs(colored ? kReset : "", stdout);
  };
  llm::ReversePrompts reverse(reverse_prompts);  // -r: shown, then the generation stops (as llama-cli)
  llm::Result res;
  llm::Request req;
  req.prompt = tokens;
  req.params.sampling = sampling;
  req.params.max_tokens = n_predict > 0 ? static_cast<size_t>(n_predict) : 0;
  req.params.strip_leading_space = prompt.empty();
  req.params.ignore_eos = ignore_eos;
  req.params.grammar = constraint;
  req.on_token = [&](const llm::Piece& p) {
    if (first) {
      first = false;
      if (mf.trace) mt.end();
      print_prompt();
      if (n_predict == 0) return false;  // prefill only
      if (mf.trace) mt.begin("decode");
    }
    shown += p.token >= 0;
    if (special && p.token >= 0 && p.text.empty() && tok.piece(p.token).empty()) {
      std::fputs(tok.text(p.token).c_str(), stdout);  // a control token: its text, as llama-cli -sp
    }
    std::fwrite(p.text.data(), 1, p.text.size(), stdout);
    std::fflush(stdout);
    return !reverse.feed(p.text) && !g_interrupted.load();
  };
  req.on_done = [&](const llm::Result& r) { res = r; };
  gen.submit(std::move(req));
  gen.run();
  if (res.reason == llm::FinishReason::error) fail(Status::io, res.error);
  if (first) {  // the first sampled token ended the generation
    if (mf.trace) mt.end();
    print_prompt();
    if (mf.trace) mt.begin("decode");
  }
  std::fputs("\n", stdout);
  std::fflush(stdout);
  signal(SIGINT, SIG_DFL);
  if (mf.trace && n_predict != 0) mt.end();
  if (g_interrupted.load()) {
    note("interrupted (Ctrl-C): " + std::to_string(shown) + " tokens generated");
  } else if (res.reason == llm::FinishReason::length && (n_predict < 0 || shown < static_cast<size_t>(n_predict))) {
    note("the context is full (" + std::to_string(cf.n_ctx) + " tokens; -c sets its size): generation stopped");
  }

  // Statistics.
  lm.print_model_lines();
  std::fprintf(stderr, "prefill: %zu tokens in %.3f s = %.1f tokens/s\n", tokens.size(), res.prefill_s,
               static_cast<double>(tokens.size()) / res.prefill_s);
  std::fprintf(stderr, "decode:  %zu tokens in %.3f s = %.1f tokens/s (%zu generated)\n", res.decode_steps, res.decode_s,
               res.decode_steps ? static_cast<double>(res.decode_steps) / res.decode_s : 0.0, shown);
  std::fprintf(stderr, "memory:  peak RSS %s (KV cache + scratch %s), %zu threads\n", mib(peak_rss_bytes()).c_str(),
               mib(gen.state_bytes()).c_str(), lm.threads);
  const llm::KvTypes kv = gen.state().kv_types();
  std::fprintf(stderr, "kv cache: K %s, V %s: %.1f KiB per token, %s for %zu positions\n", llm::kv_type_name(kv.k),
               llm::kv_type_name(kv.v), static_cast<double>(llm::State::kv_bytes_per_token(lm.model->config(), kv)) / 1024,
               mib(gen.state().kv_bytes()).c_str(), cf.n_ctx);
  return g_interrupted.load() ? 130 : 0;  // 128 + SIGINT, as llama-cli: a script can tell it from a finished run
}

}  // namespace qmm::cli
