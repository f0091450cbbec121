#include "engine_backend.h"

#include <algorithm>
#include <random>

#include "core/error.h"

namespace qmm::serve {
namespace {

constexpr size_t kLongText = 64 << 10;  // prompts from here on are built one at a time

}  // namespace

EngineBackend::EngineBackend(const llm::Model& model, const llm::Tokenizer& tok, Context& ctx,
                             const llm::GeneratorOptions& opt, std::optional<llm::ChatFormat> chat)
    : tok_(tok),
      opt_(opt),
      chat_(std::move(chat)),
      n_embd_(model.config().n_embd),
      gen_(std::make_unique<llm::GeneratorThread>(model, tok, ctx, opt)) {
  for (size_t i = 0; i < tok.n_vocab(); ++i) max_token_bytes_ = std::max(max_token_bytes_, tok.text(static_cast<int32_t>(i)).size());
}

void EngineBackend::check_fits(size_t bytes, const char* param) const {
  // No token stands for more bytes than its text has (byte-level BPE and SentencePiece texts
  // are at least as long as the bytes they stand for), so a text of n bytes has at least
  // n / max_token_bytes_ tokens: one that cannot fit a slot's context is refused before it is
  // tokenized, which bounds a request's tokenizing by the context rather than by its body.
  if (const size_t at_least = bytes / max_token_bytes_; at_least >= opt_.n_ctx) {
    throw ApiError(400, "the prompt is at least " + std::to_string(at_least) + " tokens, a slot's context holds " +
                            std::to_string(opt_.n_ctx) + " (qmm serve -c)",
                   param, "context_length_exceeded");
  }
}

EngineBackend::~EngineBackend() { shutdown(); }

std::vector<int32_t> EngineBackend::prompt_tokens(const Request& r) const {
  const char* param = r.endpoint == Endpoint::embedding ? "input" : "prompt";
  if (r.endpoint != Endpoint::chat && !r.prompt_ids.empty()) {  // token ids, as given (no BOS added)
    check_ids(r.prompt_ids, param);
    return r.prompt_ids;
  }
  if (r.endpoint != Endpoint::chat) {
    check_fits(r.prompt.size(), param);
    std::unique_lock lock(long_mu_, std::defer_lock);  // long prompts one at a time: one core at most
    if (r.prompt.size() >= kLongText) lock.lock();
    try {
      return llm::prompt_tokens(tok_, r.prompt);
    } catch (const Error& e) {
      throw ApiError(400, e.what(), param);
    }
  }
  if (!chat_) {
    throw ApiError(400, "this model has no chat template: start qmm serve with --chat-template NAME|FILE", "messages");
  }
  std::vector<llm::ChatMessage> messages;
  size_t bytes = 0;
  for (const Turn& t : r.messages) {
    messages.push_back({t.role, t.content});
    bytes += t.content.size();
  }
  // Long conversations are rendered and tokenized one at a time: their memory and time do not
  // multiply with the clients sending them.
  std::unique_lock lock(long_mu_, std::defer_lock);
  if (bytes >= kLongText) lock.lock();
  try {
    return chat_->tokens(tok_, messages, true);
  } catch (const Error& e) {
    throw ApiError(400, std::string("the chat template cannot render these messages: ") + e.what(), "messages");
  }
}

llm::GenerateParams EngineBackend::params(const Request& r) const {
  llm::GenerateParams p;
  llm::SamplerParams& s = p.sampling;
  s.temperature = r.top_p == 0 ? 0.0f : r.temperature;  // top_p 0 keeps only the best token
  s.top_p = r.top_p == 0 ? 1.0f : r.top_p;
  s.top_k = r.top_k;
  s.min_p = r.min_p;
  s.repeat_penalty = r.repeat_penalty;
  s.repeat_last_n = r.repeat_last_n;
  s.frequency_penalty = r.frequency_penalty;
  s.presence_penalty = r.presence_penalty;
  s.seed = r.seed ? *r.seed : std::random_device{}();
  p.max_tokens = r.max_tokens.value_or(0);
  p.stop = r.stop;
  p.ignore_eos = r.ignore_eos;
  p.strip_leading_space = r.endpoint == Endpoint::chat || (r.prompt.empty() && r.prompt_ids.empty());
  p.logprobs = r.logprobs;
  return p;
}

void EngineBackend::check_ids(const std::vector<int32_t>& ids, const char* param) const {
  for (const int32_t t : ids) {
    if (t < 0 || static_cast<size_t>(t) >= tok_.n_vocab()) {
      throw ApiError(400, std::string("'") + param + "' token id " + std::to_string(t) + " is outside the vocabulary (" +
                              std::to_string(tok_.n_vocab()) + " tokens)", param);
    }
  }
}

std::vector<int32_t> EngineBackend::tokenize(const std::string& text, bool add_special) const {
  std::unique_lock lock(long_mu_, std::defer_lock);  // long texts one at a time, as prompts (the body limit bounds them)
  if (text.size() >= kLongText) lock.lock();
  return tok_.encode(text, add_special);
}

std::string EngineBackend::token_piece(int32_t id) const {
  check_ids({id}, "tokens");
  return tok_.piece(id);
}

std::string EngineBackend::detokenize(const std::vector<int32_t>& ids) const {
  check_ids(ids, "tokens");
  return tok_.decode(ids);
}

std::shared_ptr<Job> EngineBackend::submit(Request r) {
  // Admission before the prompt is built: a request the queue would refuse costs no rendering
  // or tokenizing.
  {
    std::lock_guard lock(mu_);
    if (!gen_) throw ApiError(503, "the server is shutting down");
    if (gen_->active() + gen_->waiting() >= opt_.n_slots + opt_.max_queue) {  // as GeneratorThread::submit
      throw ApiError(503, "all slots are busy and the queue is full; retry later");
    }
  }
  llm::Request g;
  g.prompt = prompt_tokens(r);
  g.params = params(r);
  const bool chat = r.endpoint == Endpoint::chat;
  const bool embedding = r.endpoint == Endpoint::embedding;
  if (embedding) g.embed = pooling_;
  auto job = std::make_shared<Job>(std::move(r));
  // The callbacks run on the engine thread: they only hand text over (Job is thread-safe).
  std::weak_ptr<Job> weak = job;
  g.on_token = [weak, &tok = tok_, offset = size_t{0}](const llm::Piece& piece) mutable {
    const std::shared_ptr<Job> j = weak.lock();
    if (!j || j->cancelled()) return false;
    std::vector<TokenLogprob> lp;
    if (piece.logprobs) {  // the token and its alternatives as text
      TokenLogprob t{{tok.piece(piece.logprobs->chosen.token), piece.logprobs->chosen.logprob}, {}, offset};
      for (const llm::TokenLogprob& a : piece.logprobs->top) t.top.push_back({tok.piece(a.token), a.logprob});
      lp.push_back(std::move(t));
    }
    offset += piece.text.size();
    if (!piece.text.empty() || !lp.empty()) j->emit(std::string(piece.text), std::move(lp));
    return true;
  };
  g.on_embedding = [weak](std::vector<float> v) {
    if (const std::shared_ptr<Job> j = weak.lock()) j->emit_embedding(std::move(v));
  };
  g.on_done = [weak, &cancelled = cancelled_](const llm::Result& res) {
    const std::shared_ptr<Job> j = weak.lock();
    if (res.reason == llm::FinishReason::cancelled && (!j || j->cancelled())) ++cancelled;
    if (!j) return;
    const Usage u{res.prompt_tokens, res.generated};
    switch (res.reason) {
      case llm::FinishReason::stop: j->finish(Finish::stop, u); break;
      case llm::FinishReason::length: j->finish(Finish::length, u); break;
      case llm::FinishReason::error: j->fail(res.error); break;
      case llm::FinishReason::cancelled: j->fail("the request was cancelled (the server is stopping)"); break;
    }
  };
  if (g.prompt.size() >= opt_.n_ctx) {
    throw ApiError(400, "the prompt is " + std::to_string(g.prompt.size()) + " tokens, a slot's context holds " +
                            std::to_string(opt_.n_ctx) + " (qmm serve -c)",
                   chat ? "messages" : embedding ? "input" : "prompt", "context_length_exceeded");
  }
  if (job->request().max_tokens == 0u && !embedding) {  // the usage of the prompt only (lm-eval's scoring requests)
    job->finish(Finish::length, Usage{g.prompt.size(), 0});
    return job;
  }
  std::lock_guard lock(mu_);
  if (!gen_) throw ApiError(503, "the server is shutting down");
  std::optional<uint64_t> id;
  try {
    id = gen_->submit(std::move(g));
  } catch (const Error& e) {
    throw ApiError(400, e.what(), chat ? "messages" : embedding ? "input" : "prompt");
  }
  if (!id) throw ApiError(503, "all slots are busy and the queue is full; retry later");
  job->set_canceller([this, id = *id] {
    std::lock_guard l(mu_);
    if (gen_) gen_->cancel(id);
  });
  return job;
}

Load EngineBackend::load() const {
  std::lock_guard lock(mu_);
  if (!gen_) return {opt_.n_slots, 0, 0, cancelled_};
  return {opt_.n_slots, gen_->active(), gen_->waiting(), cancelled_};
}

void EngineBackend::shutdown() {
  std::unique_ptr<llm::GeneratorThread> g;
  {
    std::lock_guard lock(mu_);
    g.swap(gen_);
  }
  g.reset();  // cancels what is queued or running: each job gets its last event
}

}  // namespace qmm::serve
