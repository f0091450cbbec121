// qmm chat: a conversation with a chat model in the terminal (line editing when standard input
// is a terminal) or scripted through a pipe (one user message per line). Each turn renders the
// whole conversation with the model's chat template and hands it to the generator on slot 0,
// whose KV cache holds the conversation so far: only the tokens after the common prefix (the new
// turn) are prefilled. Replies stream and stop at end-of-turn tokens, which are never printed.
// When the conversation outgrows the context, the oldest turns are dropped (the system prompt
// stays); a message that cannot fit even alone is refused first, so no turn is lost for it.
// A message may span lines (a line ending in `\`, as llama-cli, or a `"""` block, as ollama);
// a line starting with `/` is a command (/help lists them). Ctrl-C stops a reply; Ctrl-C at the
// prompt, a second one, /exit or the end of input ends the session, and its statistics go to
// stderr.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "chat_file.h"
#include "core/error.h"
#include "line_reader.h"
#include "text/chat.h"
#include "think_display.h"
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
  void print() const {
    std::fprintf(stderr, "session: %zu turn%s; %zu tokens prefilled, %zu reused from the KV cache; %zu generated\n", turns,
                 turns == 1 ? "" : "s", prompt, reused, generated);
    std::fprintf(stderr, "prefill: %zu tokens in %.3f s = %.1f tokens/s\n", prompt, prefill_s,
                 prefill_s > 0 ? static_cast<double>(prompt) / prefill_s : 0.0);
    std::fprintf(stderr, "decode:  %zu tokens in %.3f s = %.1f tokens/s\n", decode_steps, decode_s,
                 decode_s > 0 ? static_cast<double>(decode_steps) / decode_s : 0.0);
  }
};

bool ends_with(const std::string& s, const char* tail) {
  const size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// One message: a line; a line ending in `\` goes on with the next (llama-cli); a line starting
// with `"""` goes on to a line ending with `"""` (ollama). nullopt at the end of the input or a
// Ctrl-C; `single` says whether it was one line (only a one-line message is a command).
std::optional<std::string> read_message(LineReader& in, bool& single) {
  std::optional<std::string> line = in.read("> ");
  single = true;
  if (!line) return std::nullopt;
  std::string msg;
  if (line->rfind("\"\"\"", 0) == 0) {
    single = false;
    std::string part = line->substr(3);
    bool first = true;
    while (!ends_with(part, "\"\"\"")) {
      if (!first || !part.empty()) msg += part + "\n";
      first = false;
      line = in.read("... ");
      if (!line) return msg.empty() ? std::nullopt : std::optional<std::string>(msg);  // input ended inside the block
      part = *line;
    }
    return msg + part.substr(0, part.size() - 3);
  }
  msg = *line;
  while (ends_with(msg, "\\")) {
    single = false;
    msg.back() = '\n';
    line = in.read("... ");
    if (!line) break;
    msg += *line;
  }
  return msg;
}

constexpr const char* kHelp =
    "commands:\n"
    "  /help          this list\n"
    "  /clear         a new conversation (the system prompt stays)\n"
    "  /regen         a new reply to the last message\n"
    "  /stats         the session's token counts and speeds so far\n"
    "  /save FILE     write the conversation to FILE (JSON: OpenAI's messages)\n"
    "  /load FILE     continue the conversation in FILE (as /save writes it)\n"
    "  /exit, /quit   end the session (as Ctrl-D)\n"
    "  //TEXT         send /TEXT as a message\n"
    "a line ending in \\ goes on with the next line; \"\"\" starts and ends a block of lines\n";

}  // namespace

int cmd_chat(int argc, char** argv) {
  ModelFlags mf;
  SamplingFlags sf;
  std::string system, chat_template, in_prefix, in_suffix;
  std::vector<std::string> reverse_prompts;
  std::string think = "auto", color = "auto";
  bool conversation = false;
  bool verbose = false;
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
      .integer("-n,--n-predict,--predict", &n_predict, "tokens per reply at most (default -1: until the end of the turn)")
      .strs("-r,--reverse-prompt", &reverse_prompts, "TEXT", "end a reply where TEXT appears (repeatable)")
      .str("--in-prefix", &in_prefix, "TEXT", "text added before each of your messages")
      .str("--in-suffix", &in_suffix, "TEXT", "text added after each of your messages")
      .choice("--think", &think, {"auto", "show", "dim", "hide"},
              "a reasoning model's <think> block: shown, dimmed or hidden (default auto: dimmed where -co is on)")
      .optional_choice("-co,--color", &color, {"on", "off", "auto"}, "on",
                       "colour (the dimmed thinking; default auto: on a terminal, unless NO_COLOR is set)")
      .flag("-cnv,--conversation", &conversation, "conversation mode: what qmm chat always is (llama-cli's flag)")
      .flag("-v,--verbose", &verbose, "print the token counts and speeds of each reply (as /stats for the session)")
      .no_effect("--keep", "N", "old turns are dropped whole when the context is full (the system prompt stays)");
  cf.add_to(args);
  sf.add_to(args);
  args.parse();
  if (n_predict < -1 || n_predict == 0) throw UsageError("-n must be -1 or at least 1");
  for (const std::string& r : reverse_prompts) {
    if (r.empty()) throw UsageError("-r: the reverse prompt is empty");
  }
  llm::SamplerParams sampling = sf.params();
  const ThinkDisplay::Mode think_mode = think == "hide"                                        ? ThinkDisplay::Mode::hide
                                        : think == "dim" || (think == "auto" && use_color(color, isatty(STDOUT_FILENO)))
                                            ? ThinkDisplay::Mode::dim
                                            : ThinkDisplay::Mode::show;
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
  if (in.interactive()) std::fprintf(stderr, "chat: %s; Ctrl-C stops a reply, Ctrl-D ends, /help lists the commands\n", fmt.template_name.c_str());

  // A reply to `messages` (which end with the user's message); false if it was refused.
  auto reply_to_last = [&]() -> bool {
    llm::FittedPrompt fitted = llm::fit_conversation(fmt, tok, messages, cf.n_ctx, reserve);
    if (!fitted.fits) {
      std::printf("[the message does not fit in the context: %zu tokens, the context holds %zu (-c)]\n\n", fitted.tokens.size(),
                  cf.n_ctx);
      messages.pop_back();
      return false;
    }
    if (fitted.dropped > 0) {
      std::fprintf(stderr, "[context full (%zu tokens, -c): dropped the %zu oldest turn%s, kept the system prompt]\n", cf.n_ctx,
                   fitted.dropped, fitted.dropped == 1 ? "" : "s");
    }
    llm::Request req;
    req.prompt = std::move(fitted.tokens);
    req.slot = 0;
    req.params.sampling = sampling;
    req.params.max_tokens = n_predict > 0 ? static_cast<size_t>(n_predict) : 0;
    req.params.stop = reverse_prompts;
    req.params.strip_leading_space = true;
    std::string reply;
    llm::Result res;
    ThinkDisplay display(think_mode);
    req.on_token = [&](const llm::Piece& p) {
      if (g_interrupts > 0) return false;
      const std::string shown = display.push(p.text);
      std::fwrite(shown.data(), 1, shown.size(), stdout);
      std::fflush(stdout);
      reply += p.text;
      return true;
    };
    req.on_done = [&](const llm::Result& r) { res = r; };
    const size_t prompt_tokens = req.prompt.size();
    gen.submit(std::move(req));
    gen.run();
    const std::string rest = display.flush();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
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
    if (verbose) {
      std::fprintf(stderr, "[%zu prompt tokens (%zu from the KV cache), %.1f tokens/s prefill; %zu generated, %.1f tokens/s]\n",
                   res.prompt_tokens, res.cached_tokens,
                   res.prefill_s > 0 ? static_cast<double>(res.prompt_tokens - res.cached_tokens) / res.prefill_s : 0.0,
                   res.generated, res.decode_s > 0 ? static_cast<double>(res.decode_steps) / res.decode_s : 0.0);
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
    return true;
  };

  for (;;) {
    g_interrupts = 0;
    bool single = true;
    std::optional<std::string> msg = read_message(in, single);
    if (!msg || g_interrupts > 0) break;
    if (msg->empty()) continue;
    if (!in.interactive()) std::printf("> %s\n", msg->c_str());
    std::fflush(stdout);
    if (single && (*msg)[0] == '/' && msg->rfind("//", 0) != 0) {
      const std::string cmd = msg->substr(0, msg->find(' '));
      if (cmd == "/exit" || cmd == "/quit" || cmd == "/bye") break;
      if (cmd == "/help") {
        std::fputs(kHelp, stdout);
      } else if (cmd == "/clear") {
        messages.clear();
        if (!system.empty()) messages.push_back({"system", system});
        std::printf("[a new conversation]\n");
      } else if (cmd == "/stats") {
        std::fflush(stdout);
        st.print();
      } else if (cmd == "/save" || cmd == "/load") {
        const size_t at = msg->find_first_not_of(' ', cmd.size());
        if (at == std::string::npos) {
          std::printf("[%s needs a file name: %s FILE]\n", cmd.c_str(), cmd.c_str());
        } else {
          const std::string path = msg->substr(at);
          try {
            if (cmd == "/save") {
              save_conversation(path, messages);
              std::printf("[%zu messages saved to %s]\n", messages.size(), path.c_str());
            } else {
              messages = load_conversation(path);
              std::printf("[%zu messages loaded from %s]\n", messages.size(), path.c_str());
            }
          } catch (const Error& e) {
            std::printf("[%s]\n", e.what());
          }
        }
      } else if (cmd == "/regen") {
        if (messages.empty() || messages.back().role != "assistant") {
          std::printf("[no reply to regenerate]\n");
        } else {
          messages.pop_back();
          reply_to_last();
        }
      } else {
        std::printf("[unknown command '%s': /help lists them; //TEXT sends /TEXT]\n", cmd.c_str());
      }
      std::fflush(stdout);
      continue;
    }
    if (msg->rfind("//", 0) == 0) msg->erase(0, 1);
    messages.push_back({"user", in_prefix + *msg + in_suffix});
    reply_to_last();
    if (g_interrupts > 1) break;
  }

  std::signal(SIGINT, SIG_DFL);
  lm.print_model_lines();
  st.print();
  std::fprintf(stderr, "memory:  peak RSS %s (KV cache + scratch %s), %zu threads\n", mib(peak_rss_bytes()).c_str(),
               mib(gen.state_bytes()).c_str(), lm.threads);
  return 0;
}

}  // namespace qmm::cli
