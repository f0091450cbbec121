// qmm chat: a conversation with a chat model in the terminal (line editing when standard input
// is a terminal) or scripted through a pipe (one user message per line). Each turn renders the
// whole conversation with the model's chat template and hands it to the generator on slot 0,
// whose KV cache holds the conversation so far: only the tokens after the common prefix (the new
// turn) are prefilled. Replies stream and stop at end-of-turn tokens, which are never printed.
// When the conversation outgrows the context, the oldest turns are dropped (the system prompt
// stays). Ctrl-C stops a reply; Ctrl-C at the prompt, a second one, or the end of input ends the
// session, and its statistics go to stderr.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "core/error.h"
#include "line_reader.h"
#include "llm/chat.h"
#include "llm/generate.h"
#include "llm_session.h"
#include "llm_util.h"
#include "verbs.h"

namespace qmm::cli {
namespace {

volatile std::sig_atomic_t g_interrupts = 0;  // Ctrl-C presses since the last prompt
extern "C" void on_sigint(int) { g_interrupts = g_interrupts + 1; }

struct SessionStats {
  size_t turns = 0, prompt = 0, reused = 0, generated = 0, decode_steps = 0;
  double prefill_s = 0, decode_s = 0;
};

// Drops the oldest turn after the system prompt (the first non-system message and the replies
// up to the next user message). False if only the newest message is left.
bool drop_oldest_turn(std::vector<llm::ChatMessage>& messages) {
  size_t first = 0;
  while (first < messages.size() && messages[first].role == "system") ++first;
  if (first + 1 >= messages.size()) return false;
  size_t end = first + 1;
  while (end + 1 < messages.size() && messages[end].role != "user") ++end;
  messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(first), messages.begin() + static_cast<std::ptrdiff_t>(end));
  return true;
}

}  // namespace

int cmd_chat(int argc, char** argv) {
  ModelFlags mf;
  SamplingFlags sf;
  std::string system, chat_template;
  ContextFlags cf;
  long long n_predict = -1;
  Args args("chat",
            "Chat with a GGUF model: type a message per line (line editing on a terminal) or pipe one message per\n"
            "line. The KV cache is kept between turns, so only each new turn is prefilled (--trace shows it).\n"
            "Ctrl-C stops a reply; Ctrl-C at the prompt or the end of input ends the session.",
            argc - 1, argv + 1);
  mf.add_to(args);
  args.str("-sys,--system", &system, "TEXT", "system prompt")
      .str("--chat-template", &chat_template, "NAME|FILE", "chat template instead of the model's (a built-in name or a Jinja file)")
      .integer("-n,--n-predict", &n_predict, "tokens per reply at most (default -1: until the end of the turn)");
  cf.add_to(args);
  sf.add_to(args);
  args.parse();
  if (n_predict < -1 || n_predict == 0) throw UsageError("-n must be -1 or at least 1");
  llm::SamplerParams sampling = sf.params();
  const LoadedModel lm = LoadedModel::load(mf);
  const llm::Tokenizer& tok = *lm.tok;
  const llm::ChatFormat fmt = llm::ChatFormat::from_model(lm.model->file(), tok, chat_template);
  cf.n_ctx = lm.context(cf.n_ctx, cf.kv.types());
  if (cf.n_ctx < 8) throw UsageError("-c must be at least 8");
  llm::Generator gen(*lm.model, tok, *lm.ctx, {1, cf.n_ctx, cf.n_batch, 1, cf.kv.types()});
  // Room a turn keeps for its reply when old turns are dropped.
  const size_t reserve = std::min(n_predict > 0 ? static_cast<size_t>(n_predict) : cf.n_ctx / 4, cf.n_ctx / 2);

  std::vector<llm::ChatMessage> messages;
  if (!system.empty()) messages.push_back({"system", system});
  struct sigaction sa {};
  sa.sa_handler = on_sigint;  // no SA_RESTART: Ctrl-C interrupts the read at the prompt
  sigaction(SIGINT, &sa, nullptr);
  LineReader in;
  SessionStats st;
  if (in.interactive()) std::fprintf(stderr, "chat: %s; Ctrl-C stops a reply, Ctrl-D ends\n", fmt.template_name.c_str());

  for (;;) {
    g_interrupts = 0;
    const std::optional<std::string> line = in.read("> ");
    if (!line || g_interrupts > 0) break;
    if (line->empty()) continue;
    if (!in.interactive()) std::printf("> %s\n", line->c_str());
    std::fflush(stdout);
    messages.push_back({"user", *line});
    std::vector<int32_t> prompt = fmt.tokens(tok, messages, true);
    size_t dropped = 0;
    while (prompt.size() + reserve > cf.n_ctx && drop_oldest_turn(messages)) {
      ++dropped;
      prompt = fmt.tokens(tok, messages, true);
    }
    if (dropped > 0) {
      std::fprintf(stderr, "[context full (%zu tokens, -c): dropped the %zu oldest turn%s, kept the system prompt]\n", cf.n_ctx,
                   dropped, dropped == 1 ? "" : "s");
    }
    if (prompt.size() >= cf.n_ctx) {
      std::printf("[the message does not fit in the context: %zu tokens, the context holds %zu (-c)]\n", prompt.size(), cf.n_ctx);
      messages.pop_back();
      continue;
    }

    llm::Request req;
    req.prompt = std::move(prompt);
    req.slot = 0;
    req.params.sampling = sampling;
    req.params.max_tokens = n_predict > 0 ? static_cast<size_t>(n_predict) : 0;
    req.params.stop_tokens = fmt.end_tokens;
    req.params.strip_leading_space = true;
    std::string reply;
    llm::Result res;
    req.on_token = [&](const llm::Piece& p) {
      if (g_interrupts > 0) return false;
      std::fwrite(p.text.data(), 1, p.text.size(), stdout);
      std::fflush(stdout);
      reply += p.text;
      return true;
    };
    req.on_done = [&](const llm::Result& r) { res = r; };
    const size_t prompt_tokens = req.prompt.size();
    gen.submit(std::move(req));
    gen.run();
    std::printf("\n");
    if (res.reason == llm::FinishReason::cancelled) std::printf("[interrupted]\n");
    if (res.reason == llm::FinishReason::length && prompt_tokens + res.generated >= cf.n_ctx) {
      std::printf("[context full (%zu tokens, -c): the reply was cut; older turns are dropped from the next turn on]\n", cf.n_ctx);
    }
    std::printf("\n");
    std::fflush(stdout);
    if (mf.trace) {
      std::fprintf(stderr, "trace turn %zu: %zu prompt tokens, %zu reused from the KV cache, %zu prefilled; %zu generated (%s)\n",
                   st.turns + 1, res.prompt_tokens, res.cached_tokens, res.prompt_tokens - res.cached_tokens, res.generated,
                   llm::finish_reason_name(res.reason));
    }
    messages.push_back({"assistant", reply});
    ++st.turns;
    st.prompt += res.prompt_tokens - res.cached_tokens;
    st.reused += res.cached_tokens;
    st.generated += res.generated;
    st.decode_steps += res.decode_steps;
    st.prefill_s += res.prefill_s;
    st.decode_s += res.decode_s;
    ++sampling.seed;  // each turn its own draws
    if (g_interrupts > 1) break;
  }

  std::signal(SIGINT, SIG_DFL);
  lm.print_model_lines();
  std::fprintf(stderr, "session: %zu turn%s; %zu tokens prefilled, %zu reused from the KV cache; %zu generated\n", st.turns,
               st.turns == 1 ? "" : "s", st.prompt, st.reused, st.generated);
  std::fprintf(stderr, "prefill: %zu tokens in %.3f s = %.1f tokens/s\n", st.prompt, st.prefill_s,
               st.prefill_s > 0 ? static_cast<double>(st.prompt) / st.prefill_s : 0.0);
  std::fprintf(stderr, "decode:  %zu tokens in %.3f s = %.1f tokens/s\n", st.decode_steps, st.decode_s,
               st.decode_s > 0 ? static_cast<double>(st.decode_steps) / st.decode_s : 0.0);
  std::fprintf(stderr, "memory:  peak RSS %s (KV cache + scratch %s), %zu threads\n", mib(peak_rss_bytes()).c_str(),
               mib(gen.state_bytes()).c_str(), lm.threads);
  return 0;
}

}  // namespace qmm::cli
