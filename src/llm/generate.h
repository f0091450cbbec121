// Text generation for many sequences at once, the engine of `qmm run`, `qmm chat` and
// `qmm serve`.
//
// A Generator owns n_slots KV caches (one State with n_slots sequences). Each submitted
// Request gets a free slot, its own sampler, token history and stop conditions. Every step()
// is ONE forward pass over all active slots: each decoding slot contributes its next token
// (one row each), and at most one chunk of up to n_batch prompt tokens of slots still being
// prefilled fills the rest, so a long prompt delays the others by one chunk per step, not by
// its whole length. Because all rows share the matmuls, the GEMM kernels read the weights
// once for m = (number of rows) instead of once per sequence; attention stays per sequence,
// against its own cache. The kernels are row-independent, so a greedy sequence produces the
// same tokens whether it runs alone or beside others.
//
// Slots keep their cache after a request finishes: a new request on a slot prefills only the
// tokens after the longest common prefix of its prompt and the slot's cached tokens (a chat's
// next turn, or a server request repeating a conversation). A request names a slot, or takes
// the free slot with the longest common prefix. With a prompt cache (GeneratorOptions::
// cache_bytes, prompt_cache.h) finished sequences are also kept by blocks of tokens, and a
// request starts from the longest prefix cached by any earlier request when that is longer.
//
// Text: each generated token yields a Piece whose text is the valid UTF-8 that became final
// with it (TextStream; possibly empty), with stop strings cut off (text that may be the start
// of a stop string is held back until it is known not to be). End-of-generation tokens (EOS,
// EOT, and params.stop_tokens) end the request with finish reason `stop` and are never shown.
//
// Threads: a Generator is NOT thread-safe: one thread calls submit/cancel/step, and the
// callbacks run on that thread, inside step() or cancel() (a callback must neither call the
// Generator nor throw; it returns false from on_token to cancel its own request).
// GeneratorThread wraps one in an engine thread: submit() and cancel() may be called from any
// thread (a bounded queue hands requests over), and the callbacks run on the engine thread, so
// they must be quick and must not block on the engine (hand the text to the client's thread).
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "llm/embed.h"
#include "llm/grammar_filter.h"
#include "llm/logprobs.h"
#include "llm/model.h"
#include "llm/prompt_cache.h"
#include "llm/sampler.h"
#include "text/tokenizer.h"

namespace qmm::llm {

enum class FinishReason {
  stop,       // an end-of-generation token or a stop string
  length,     // max_tokens generated, or the slot's context is full
  cancelled,  // cancel(), on_token returned false, or the engine shut down
  error,      // Result::error says why
};
const char* finish_reason_name(FinishReason r);  // "stop", "length", "cancelled", "error"

struct GenerateParams {
  SamplerParams sampling;
  size_t max_tokens = 0;                 // tokens to generate; 0: until a stop or the context is full
  std::vector<std::string> stop;         // stop strings: the text ends before the first one found
  std::vector<int32_t> stop_tokens;      // end tokens besides the tokenizer's EOS/EOT (end of turn)
  bool ignore_eos = false;               // generate through EOS/EOT (benchmarks)
  bool strip_leading_space = false;      // drop the SentencePiece space before the first word
  int logprobs = -1;                     // >= 0: each token's log-prob and this many alternatives (Piece::logprobs)
  // Optional: only text this grammar accepts is generated (GBNF, grammar.h); the request
  // finishes with `stop` where the grammar has ended, and an end token is allowed only where
  // it may end.
  std::shared_ptr<const Grammar> grammar;
};

// One generated token (token -1: the text left over when an end token arrives). `text` is
// valid only during the callback.
struct Piece {
  int32_t token;
  std::string_view text;  // the UTF-8 this token completes, stop strings removed; may be empty
  const TokenLogprobs* logprobs = nullptr;  // with params.logprobs >= 0 (token >= 0 only)
};

struct Result {
  uint64_t id = 0;
  FinishReason reason = FinishReason::stop;
  std::string error;           // for FinishReason::error
  int slot = -1;
  size_t prompt_tokens = 0;    // the request's prompt
  size_t cached_tokens = 0;    // of those, already in the slot's cache (not prefilled again)
  size_t generated = 0;        // completion tokens (each reported by on_token)
  size_t decode_steps = 0;     // forward passes after the first generated token
  double queue_s = 0;          // submit -> slot assigned
  double prefill_s = 0;        // slot assigned -> first token sampled
  double decode_s = 0;         // first token -> finished
};

// The tokens of a plain-text prompt (`qmm run`, /v1/completions): BOS / EOS as the model
// asks; an empty prompt starts from BOS alone (Error(invalid_argument) if the model has none).
std::vector<int32_t> prompt_tokens(const Tokenizer& tok, std::string_view text);

struct Request {
  uint64_t id = 0;                   // 0: the Generator assigns one (submit returns it)
  std::vector<int32_t> prompt;       // at least one token, fewer than n_ctx
  GenerateParams params;
  int slot = -1;                     // -1: any free slot (longest cached prefix), else this slot
  bool cache_prompt = true;          // false: prefill the whole prompt (no prefix of the slot or the prompt cache)
  std::function<bool(const Piece&)> on_token;     // optional; false cancels the request
  std::function<void(const Result&)> on_done;     // optional; called exactly once
  // An embedding instead of a generation (embed.h): the whole prompt is prefilled (no cached
  // prefix reused), its hidden states pooled, on_embedding called, then on_done with `stop`
  // and nothing generated.
  Pooling embed = Pooling::none;
  std::function<void(std::vector<float>)> on_embedding;
};

struct GeneratorOptions {
  size_t n_slots = 1;    // sequences decoded together
  size_t n_ctx = 2048;   // positions per slot
  size_t n_batch = 512;  // prompt tokens prefilled per step (on top of one row per decoding slot)
  size_t max_queue = 64; // GeneratorThread: requests that may wait beside n_slots running before submit refuses
  KvTypes kv = {};       // KV cache element types (-ctk / -ctv; F16 by default)
  size_t cache_bytes = 0;  // the prompt cache's budget in host RAM (--cache-ram); 0: none
};

// Running totals of a generator (for /metrics and /slots).
struct GeneratorCounters {
  size_t prompt_tokens = 0;       // of every request started
  size_t cached_tokens = 0;       // of those, not prefilled (from the slot or the prompt cache)
  size_t cache_bytes = 0;         // the prompt cache holds (never above its budget)
  size_t cache_budget = 0;        // 0: no prompt cache
  size_t cache_blocks = 0;
};

class Generator {
 public:
  // model, tok and ctx must outlive the generator.
  Generator(const Model& model, const Tokenizer& tok, Context& ctx, const GeneratorOptions& opt);

  // Throws Error(invalid_argument) for an empty or too long prompt, a token outside the
  // vocabulary, a slot outside 0..n_slots-1 or bad sampling values. Thread-safe (reads only).
  void validate(const Request& r) const;
  // Validates and queues the request; it starts at the next step() that finds its slot free.
  uint64_t submit(Request r);
  // Ends a queued or running request (on_done with `cancelled`); false if it is unknown or done.
  bool cancel(uint64_t id);
  void cancel_all();
  // One forward pass over every active slot (admitting queued requests first). Returns false
  // when there was nothing to do.
  bool step();
  void run() { while (step()) {} }  // until every request has finished

  bool idle() const { return active_ == 0 && queue_.empty(); }
  size_t active() const { return active_; }
  size_t queued() const { return queue_.size(); }
  const GeneratorOptions& options() const { return opt_; }
  const std::vector<int32_t>& cached(int slot) const { return slots_.at(static_cast<size_t>(slot)).cached; }
  size_t state_bytes() const { return state_.bytes(); }
  const State& state() const { return state_; }
  GeneratorCounters counters() const;
  // Why there is no prompt cache though one was asked for ("" when there is one or none was asked).
  const std::string& cache_off_reason() const { return cache_off_; }

  // Slots between requests (`qmm serve`'s /slots). A busy slot is an Error(unsupported).
  bool busy(int slot) const { return slots_.at(static_cast<size_t>(slot)).req.has_value(); }
  uint64_t task(int slot) const { return busy(slot) ? slots_[static_cast<size_t>(slot)].req->id : 0; }
  size_t save_slot(int slot, const std::string& path);     // slot_file.h; returns the bytes written
  size_t restore_slot(int slot, const std::string& path);  // returns the bytes read; cached(slot) holds the tokens
  size_t erase_slot(int slot);                             // empties its cache; returns the tokens it held

 private:
  struct Slot {
    std::vector<int32_t> cached;          // tokens whose K/V are in the cache (State::pos(slot))
    std::optional<Request> req;           // the running request
    std::vector<int32_t> history;         // prompt + generated, for the sampler
    std::optional<Sampler> sampler;
    std::unique_ptr<GrammarFilter> grammar;  // params.grammar's state
    std::optional<TextStream> stream;
    std::optional<Pooler> pooler;         // embedding requests
    TokenLogprobs logprobs;               // of the token just sampled (params.logprobs >= 0)
    std::string held;                     // text that may begin a stop string
    size_t prefilled = 0;                 // prompt tokens in the cache
    int32_t next = -1;                    // sampled, to be fed next step (decoding when >= 0)
    Result res;
    double t_submit = 0, t_start = 0, t_first = 0;
  };
  void admit();
  void start(Slot& s, Request r, double t_submit);
  void on_sampled(Slot& s, int32_t token);
  void finish(Slot& s, FinishReason reason, std::string error = {});
  Piece piece(const Slot& s, int32_t token, std::string_view text) const;
  bool emit(Slot& s, int32_t token, std::string text, bool last);  // false: stop string found or cancelled

  const Model& model_;
  const Tokenizer& tok_;
  GeneratorOptions opt_;
  State state_;
  std::vector<Slot> slots_;
  struct Queued {
    Request req;
    double t_submit;
  };
  std::deque<Queued> queue_;
  size_t active_ = 0;
  uint64_t next_id_ = 1;
  std::vector<int32_t> tokens_;   // the step's batch
  std::vector<BatchRow> rows_;
  std::vector<size_t> out_slot_;  // slot of each logits row
  std::unique_ptr<GrammarVocab> grammar_vocab_;  // built at the first request with a grammar
  std::unique_ptr<PromptCache> cache_;
  std::string cache_off_;
  size_t prompt_total_ = 0, cached_total_ = 0;
};

// A Generator on its own engine thread, for servers: submit/cancel from any thread.
class GeneratorThread {
 public:
  GeneratorThread(const Model& model, const Tokenizer& tok, Context& ctx, const GeneratorOptions& opt);
  ~GeneratorThread();  // cancels what is queued or running (on_done: cancelled), joins
  GeneratorThread(const GeneratorThread&) = delete;
  GeneratorThread& operator=(const GeneratorThread&) = delete;

  // Validates (throws Error(invalid_argument) on the caller's thread) and hands the request
  // to the engine; returns its id, or nullopt when n_slots + max_queue requests are unfinished.
  std::optional<uint64_t> submit(Request r);
  void cancel(uint64_t id);  // any time; a no-op for a finished or unknown id
  size_t active() const;     // requests running (as of the last step)
  size_t waiting() const;    // requests waiting for a slot
  // The engine as of its last step (metrics): cache positions holding tokens, over every
  // slot, and forward passes so far.
  struct Stats {
    size_t kv_tokens = 0;
    uint64_t steps = 0;
  };
  Stats stats() const;
  GeneratorCounters counters() const;  // as of the last step
  // Runs f on the engine thread between two steps and waits for it; what f throws is rethrown
  // here (Error(unsupported) when the engine has stopped).
  void call(const std::function<void(Generator&)>& f);

 private:
  void loop();
  Generator gen_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> inbox_;
  std::vector<uint64_t> cancels_;
  struct Call {
    const std::function<void(Generator&)>* f;
    std::exception_ptr error;
    bool done = false;
  };
  std::vector<Call*> calls_;
  std::condition_variable done_cv_;
  GeneratorCounters counters_;
  size_t active_ = 0, waiting_ = 0;
  Stats stats_;
  uint64_t next_id_ = 1;
  bool stop_ = false;
  std::thread thread_;
};

// llama-cli's reverse prompts (`qmm run -r`): the generation stops once the text streamed so
// far holds one of them, which is shown (unlike Params::stop, which cuts a stop string off).
class ReversePrompts {
 public:
  explicit ReversePrompts(std::vector<std::string> prompts);
  // Adds the next streamed text; true once a reverse prompt has appeared (and ever after).
  bool feed(std::string_view text);

 private:
  std::vector<std::string> prompts_;
  std::string tail_;  // the last (longest prompt) bytes streamed
  size_t longest_ = 0;
  bool seen_ = false;
};

}  // namespace qmm::llm
