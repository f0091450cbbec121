#include "llm/generate.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.h"

namespace qmm::llm {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

// The length of the longest suffix of `text` that is a proper prefix of one of `stops`.
size_t stop_prefix_suffix(std::string_view text, const std::vector<std::string>& stops) {
  size_t best = 0;
  for (const std::string& s : stops) {
    for (size_t n = std::min(text.size(), s.size() - 1); n > best; --n) {
      if (text.substr(text.size() - n) == std::string_view(s).substr(0, n)) {
        best = n;
        break;
      }
    }
  }
  return best;
}

}  // namespace

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::stop: return "stop";
    case FinishReason::length: return "length";
    case FinishReason::cancelled: return "cancelled";
    case FinishReason::error: return "error";
  }
  return "?";
}

std::vector<int32_t> prompt_tokens(const Tokenizer& tok, std::string_view text) {
  std::vector<int32_t> tokens = tok.encode(text, true);
  if (tokens.empty()) {
    if (tok.bos() < 0) fail(Status::invalid_argument, "the prompt is empty and the model has no BOS token");
    tokens.push_back(tok.bos());
  }
  return tokens;
}

Generator::Generator(const Model& model, const Tokenizer& tok, Context& ctx, const GeneratorOptions& opt)
    : model_(model),
      tok_(tok),
      opt_(opt),
      state_(model, opt.n_ctx, opt.n_batch + opt.n_slots, ctx, opt.n_slots, opt.kv),
      slots_(opt.n_slots) {
  check_arg(opt.n_batch >= 1 && opt.n_slots >= 1 && opt.n_ctx >= 2, "generator: n_batch, n_slots >= 1 and n_ctx >= 2");
  check_arg(tok.n_vocab() <= model.config().n_vocab, "the tokenizer has more tokens than the model");
  tokens_.reserve(state_.n_batch());
  rows_.reserve(state_.n_batch());
  out_slot_.reserve(opt.n_slots);
  if (opt.cache_bytes > 0 && state_.kv_copyable()) {
    cache_ = std::make_unique<PromptCache>(opt.cache_bytes, state_.kv_copy_bytes(PromptCache::kBlockTokens));
  } else if (opt.cache_bytes > 0) {
    cache_off_ = "the prompt cache is off: this model's sliding-window layers keep only their window (a ring), not the positions a cached prefix needs";
  }
}

void Generator::validate(const Request& r) const {
  check_arg(!r.prompt.empty(), "the prompt is empty");
  if (r.prompt.size() >= opt_.n_ctx) {
    fail(Status::invalid_argument, "the prompt is " + std::to_string(r.prompt.size()) + " tokens, the context holds " +
                                       std::to_string(opt_.n_ctx));
  }
  for (int32_t t : r.prompt) {
    if (t < 0 || static_cast<size_t>(t) >= tok_.n_vocab()) fail(Status::invalid_argument, "token id " + std::to_string(t) + " is outside the vocabulary");
  }
  check_arg(r.slot >= -1 && r.slot < static_cast<int>(opt_.n_slots), "slot " + std::to_string(r.slot) + " does not exist");
  const SamplerParams& p = r.params.sampling;
  check_arg(p.temperature >= 0 && std::isfinite(p.temperature), "temperature must be a finite number >= 0");
  check_arg(p.top_p > 0 && p.top_p <= 1, "top_p must be in (0, 1]");
  check_arg(p.min_p >= 0 && p.min_p <= 1, "min_p must be in [0, 1]");
  check_arg(p.repeat_penalty > 0 && std::isfinite(p.repeat_penalty), "the repeat penalty must be > 0");
  check_arg(std::isfinite(p.frequency_penalty) && std::isfinite(p.presence_penalty), "the penalties must be finite");
  for (const std::string& s : r.params.stop) check_arg(!s.empty(), "a stop string is empty");
}

uint64_t Generator::submit(Request r) {
  validate(r);
  if (r.id == 0) r.id = next_id_++;
  const uint64_t id = r.id;
  queue_.push_back({std::move(r), now()});
  return id;
}

bool Generator::cancel(uint64_t id) {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->req.id != id) continue;
    Result res;
    res.id = id;
    res.reason = FinishReason::cancelled;
    res.prompt_tokens = it->req.prompt.size();
    const auto done = std::move(it->req.on_done);
    queue_.erase(it);
    if (done) done(res);
    return true;
  }
  for (Slot& s : slots_) {
    if (s.req && s.req->id == id) {
      finish(s, FinishReason::cancelled);
      return true;
    }
  }
  return false;
}

void Generator::cancel_all() {
  while (!queue_.empty()) cancel(queue_.front().req.id);
  for (Slot& s : slots_) {
    if (s.req) finish(s, FinishReason::cancelled);
  }
}

// Queued requests take free slots in order: the named slot, or the free one whose cache shares
// the longest prefix with the prompt.
void Generator::admit() {
  for (auto it = queue_.begin(); it != queue_.end() && active_ < slots_.size();) {
    int best = it->req.slot;
    if (best >= 0 && slots_[static_cast<size_t>(best)].req) {
      ++it;  // its slot is busy: it waits, the others go on
      continue;
    }
    if (best < 0) {
      size_t best_len = 0;
      for (size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].req) continue;
        const size_t len = common_prefix(slots_[i].cached, it->req.prompt);
        if (best < 0 || len > best_len) best = static_cast<int>(i), best_len = len;
      }
    }
    Queued q = std::move(*it);
    it = queue_.erase(it);
    start(slots_[static_cast<size_t>(best)], std::move(q.req), q.t_submit);
  }
}

void Generator::start(Slot& s, Request r, double t_submit) {
  const size_t slot = static_cast<size_t>(&s - slots_.data());
  // Reuse the cached prefix, but prefill at least the last prompt token (its logits are needed),
  // and all of it when a sliding window's ring no longer holds the positions before the prefix's end.
  // An embedding needs every position's hidden state: nothing is reused.
  const bool reuse = r.embed == Pooling::none && r.cache_prompt;
  size_t keep = state_.truncate(slot, reuse ? std::min(common_prefix(s.cached, r.prompt), r.prompt.size() - 1) : 0);
  // A longer prefix cached by any earlier request is copied in.
  if (cache_ && reuse) keep = cache_->restore(state_, slot, r.prompt, keep, r.prompt.size() - 1);
  s.cached.assign(r.prompt.begin(), r.prompt.begin() + static_cast<std::ptrdiff_t>(keep));
  prompt_total_ += r.prompt.size();
  cached_total_ += keep;
  s.prefilled = keep;
  s.history = r.prompt;
  s.sampler.emplace(r.params.sampling, tok_.n_vocab());
  s.grammar.reset();
  if (r.params.grammar) {
    if (!grammar_vocab_) grammar_vocab_ = std::make_unique<GrammarVocab>(tok_);
    s.grammar = std::make_unique<GrammarFilter>(
        r.params.grammar, *grammar_vocab_,
        [this, ignore = r.params.ignore_eos, ends = r.params.stop_tokens](int32_t t) {
          return (!ignore && tok_.is_end_of_generation(t)) || std::find(ends.begin(), ends.end(), t) != ends.end();
        });
  }
  s.stream.emplace(tok_, r.params.strip_leading_space);
  if (r.embed != Pooling::none) {
    s.pooler.emplace(model_, r.embed);
  } else {
    s.pooler.reset();
  }
  s.held.clear();
  s.next = -1;
  s.res = Result{};
  s.res.id = r.id;
  s.res.slot = static_cast<int>(slot);
  s.res.prompt_tokens = r.prompt.size();
  s.res.cached_tokens = keep;
  s.t_submit = t_submit;
  s.t_start = now();
  s.t_first = 0;
  s.res.queue_s = s.t_start - t_submit;
  s.req.emplace(std::move(r));
  ++active_;
}

bool Generator::step() {
  admit();
  tokens_.clear();
  rows_.clear();
  out_slot_.clear();
  // One row per decoding slot, then one chunk of the prompt of the first slot still prefilling
  // (the lowest request id: oldest first).
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!s.req || s.next < 0) continue;
    tokens_.push_back(s.next);
    rows_.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(s.cached.size()), true});
    out_slot_.push_back(i);
  }
  const size_t fill_row0 = rows_.size();
  Slot* fill = nullptr;
  for (Slot& s : slots_) {
    if (s.req && s.next < 0 && (!fill || s.req->id < fill->req->id)) fill = &s;
  }
  if (fill) {
    const size_t i = static_cast<size_t>(fill - slots_.data());
    const std::vector<int32_t>& prompt = fill->req->prompt;
    const size_t take = std::min(opt_.n_batch, prompt.size() - fill->prefilled);
    for (size_t j = 0; j < take; ++j) {
      const size_t p = fill->prefilled + j;
      const bool last = p + 1 == prompt.size();
      tokens_.push_back(prompt[p]);
      rows_.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(p), last});
      if (last) out_slot_.push_back(i);
    }
  }
  if (rows_.empty()) return false;

  const float* logits = nullptr;
  try {
    logits = forward(model_, state_, tokens_.data(), rows_.data(), rows_.size());
  } catch (const Error& e) {  // (validated requests never get here)
    for (Slot& s : slots_) {
      if (s.req) finish(s, FinishReason::error, e.what());
    }
    return true;
  }
  for (size_t r = 0; r < rows_.size(); ++r) slots_[rows_[r].seq].cached.push_back(tokens_[r]);
  if (fill) {
    if (fill->pooler) fill->pooler->add(state_.hidden() + fill_row0 * model_.config().n_embd, rows_.size() - fill_row0);
    fill->prefilled = std::min(fill->req->prompt.size(), fill->prefilled + opt_.n_batch);
  }
  const size_t n_vocab = model_.config().n_vocab;
  for (size_t j = 0; j < out_slot_.size(); ++j) {
    Slot& s = slots_[out_slot_[j]];
    if (!s.req) continue;
    if (s.pooler) {  // an embedding: the prompt is in, nothing is generated
      if (s.req->on_embedding) s.req->on_embedding(s.pooler->result());
      finish(s, FinishReason::stop);
      continue;
    }
    if (s.next >= 0) ++s.res.decode_steps;
    int32_t token;
    try {
      token = s.sampler->sample(logits + j * n_vocab, s.history, s.grammar.get());
      if (s.grammar) s.grammar->accept(token);
    } catch (const Error& e) {  // non-finite logits, a grammar that allows nothing or explodes
      finish(s, FinishReason::error, e.what());
      continue;
    }
    if (const int n = s.req->params.logprobs; n >= 0) {
      token_logprobs(logits + j * n_vocab, tok_.n_vocab(), token, static_cast<size_t>(n), s.logprobs);
    }
    on_sampled(s, token);
  }
  return true;
}

void Generator::on_sampled(Slot& s, int32_t token) {
  if (s.t_first == 0) s.t_first = now();
  const GenerateParams& p = s.req->params;
  const bool end = (!p.ignore_eos && tok_.is_end_of_generation(token)) ||
                   std::find(p.stop_tokens.begin(), p.stop_tokens.end(), token) != p.stop_tokens.end();
  if (end) {
    std::string rest = s.stream->flush();
    if (!emit(s, -1, std::move(rest), true)) return;
    finish(s, FinishReason::stop);
    return;
  }
  s.history.push_back(token);
  ++s.res.generated;
  s.next = token;
  const bool length = (p.max_tokens > 0 && s.res.generated >= p.max_tokens) || s.cached.size() >= opt_.n_ctx;
  const bool ended = s.grammar && s.grammar->done();
  std::string text = s.stream->push(token);
  if (length || ended) text += s.stream->flush();
  if (!emit(s, token, std::move(text), length || ended)) return;
  if (ended) {
    finish(s, FinishReason::stop);
  } else if (length) {
    finish(s, FinishReason::length);
  }
}

// Hands `text` to on_token, holding back what may begin a stop string (all of it when `last`
// is false). Finishes the request and returns false at a stop string or a cancel.
bool Generator::emit(Slot& s, int32_t token, std::string text, bool last) {
  const std::vector<std::string>& stops = s.req->params.stop;
  if (!stops.empty()) {
    s.held += text;
    size_t cut = std::string::npos;
    for (const std::string& stop : stops) cut = std::min(cut, s.held.find(stop));
    const bool stopped = cut != std::string::npos;
    const size_t shown = stopped ? cut : s.held.size() - (last ? 0 : stop_prefix_suffix(s.held, stops));
    text = s.held.substr(0, shown);
    s.held.erase(0, shown);
    if (stopped) {
      if (s.req->on_token && (token >= 0 || !text.empty())) s.req->on_token(piece(s, token, text));
      finish(s, FinishReason::stop);
      return false;
    }
  }
  if (token < 0 && text.empty()) return true;  // an end token with nothing left to show
  if (s.req->on_token && !s.req->on_token(piece(s, token, text))) {
    finish(s, FinishReason::cancelled);
    return false;
  }
  return true;
}

Piece Generator::piece(const Slot& s, int32_t token, std::string_view text) const {
  return Piece{token, text, token >= 0 && s.req->params.logprobs >= 0 ? &s.logprobs : nullptr};
}

void Generator::finish(Slot& s, FinishReason reason, std::string error) {
  const double t = now();
  if (s.t_first == 0) {
    s.res.prefill_s = t - s.t_start;
  } else {
    s.res.prefill_s = s.t_first - s.t_start;
    s.res.decode_s = t - s.t_first;
  }
  s.res.reason = reason;
  s.res.error = std::move(error);
  Request req = std::move(*s.req);
  s.req.reset();
  s.next = -1;
  --active_;
  if (req.on_done) req.on_done(s.res);
  // The finished sequence's blocks go to the prompt cache (after the client has its answer).
  if (cache_ && reason != FinishReason::error) cache_->store(state_, static_cast<size_t>(&s - slots_.data()), s.cached);
}

GeneratorThread::GeneratorThread(const Model& model, const Tokenizer& tok, Context& ctx, const GeneratorOptions& opt)
    : gen_(model, tok, ctx, opt), counters_(gen_.counters()), thread_([this] { loop(); }) {}

GeneratorThread::~GeneratorThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Call* c : calls_) {  // never run: the engine stopped first
      c->error = std::make_exception_ptr(Error(Status::unsupported, "the engine has stopped"));
      c->done = true;
    }
    calls_.clear();
  }
  done_cv_.notify_all();
  for (Request& r : inbox_) {
    Result res;
    res.id = r.id;
    res.reason = FinishReason::cancelled;
    res.prompt_tokens = r.prompt.size();
    if (r.on_done) r.on_done(res);
  }
  gen_.cancel_all();
}

std::optional<uint64_t> GeneratorThread::submit(Request r) {
  gen_.validate(r);
  std::lock_guard<std::mutex> lock(mu_);
  // Every request not yet finished counts, running or not: a burst of n_slots + max_queue
  // requests fits, whether the engine thread has taken the first ones over yet or not.
  const GeneratorOptions& o = gen_.options();
  if (active_ + waiting_ + inbox_.size() >= o.n_slots + o.max_queue) return std::nullopt;
  r.id = next_id_++;
  const uint64_t id = r.id;
  inbox_.push_back(std::move(r));
  cv_.notify_all();
  return id;
}

void GeneratorThread::cancel(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  cancels_.push_back(id);
  cv_.notify_all();
}

size_t GeneratorThread::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

size_t GeneratorThread::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_ + inbox_.size();
}

GeneratorThread::Stats GeneratorThread::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void GeneratorThread::loop() {
  std::deque<Request> inbox;
  std::vector<uint64_t> cancels;
  std::vector<Call*> calls;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !inbox_.empty() || !cancels_.empty() || !calls_.empty() || !gen_.idle(); });
      if (stop_) return;
      calls.swap(calls_);
      inbox.swap(inbox_);
      cancels.swap(cancels_);
      waiting_ += inbox.size();
    }
    for (Call* c : calls) {  // between steps: no request is half-way through one
      try {
        (*c->f)(gen_);
      } catch (...) {
        c->error = std::current_exception();
      }
    }
    if (!calls.empty()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (Call* c : calls) c->done = true;
      }
      done_cv_.notify_all();
      calls.clear();
    }
    for (Request& r : inbox) gen_.submit(std::move(r));  // (validated by submit())
    inbox.clear();
    for (uint64_t id : cancels) gen_.cancel(id);
    cancels.clear();
    const bool stepped = gen_.step();
    size_t kv = 0;
    for (size_t i = 0; i < gen_.options().n_slots; ++i) kv += gen_.cached(static_cast<int>(i)).size();
    std::lock_guard<std::mutex> lock(mu_);
    if (stepped) ++stats_.steps;
    active_ = gen_.active();
    waiting_ = gen_.queued();
    stats_.kv_tokens = kv;
    counters_ = gen_.counters();
  }
}

GeneratorCounters GeneratorThread::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

void GeneratorThread::call(const std::function<void(Generator&)>& f) {
  Call c{&f, nullptr, false};
  std::unique_lock<std::mutex> lock(mu_);
  if (stop_) fail(Status::unsupported, "the engine has stopped");
  calls_.push_back(&c);
  cv_.notify_all();
  done_cv_.wait(lock, [&] { return c.done; });
  if (c.error) std::rethrow_exception(c.error);
}

ReversePrompts::ReversePrompts(std::vector<std::string> prompts) : prompts_(std::move(prompts)) {
  for (const std::string& r : prompts_) longest_ = std::max(longest_, r.size());
}

bool ReversePrompts::feed(std::string_view text) {
  if (seen_ || longest_ == 0) return seen_;
  tail_.append(text);
  for (const std::string& r : prompts_) seen_ = seen_ || tail_.find(r) != std::string::npos;
  if (tail_.size() > longest_) tail_.erase(0, tail_.size() - longest_);
  return seen_;
}

}  // namespace qmm::llm
