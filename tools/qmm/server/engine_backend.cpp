#include "engine_backend.h"

#include <random>

#include "core/error.h"

namespace qmm::serve {
namespace {

// End-of-turn markers of the common chat formats (ChatML, Llama 3, Gemma, Phi-3): generation
// stops at them even where the GGUF does not mark them as EOS/EOT.
const char* const kEndOfTurn[] = {"<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>"};

}  // namespace

EngineBackend::EngineBackend(const llm::Model& model, const llm::Tokenizer& tok, Context& ctx,
                             const llm::GeneratorOptions& opt, ChatRenderer render_chat)
    : tok_(tok),
      opt_(opt),
      render_chat_(std::move(render_chat)),
      gen_(std::make_unique<llm::GeneratorThread>(model, tok, ctx, opt)) {
  for (const char* t : kEndOfTurn) {
    if (const int32_t id = tok.find(t); id >= 0) end_of_turn_.push_back(id);
  }
}

EngineBackend::~EngineBackend() { shutdown(); }

std::vector<int32_t> EngineBackend::prompt_tokens(const Request& r) const {
  if (r.endpoint == Endpoint::completion && !r.prompt_ids.empty()) {  // token ids, as given (no BOS added)
    for (const int32_t t : r.prompt_ids) {
      if (static_cast<size_t>(t) >= tok_.n_vocab()) {
        throw ApiError(400, "'prompt' token id " + std::to_string(t) + " is outside the vocabulary (" +
                                std::to_string(tok_.n_vocab()) + " tokens)", "prompt");
      }
    }
    return r.prompt_ids;
  }
  if (r.endpoint == Endpoint::completion) {
    std::vector<int32_t> t = tok_.encode(r.prompt, tok_.add_bos());
    if (t.empty() && tok_.bos() >= 0) t.push_back(tok_.bos());
    if (t.empty()) throw ApiError(400, "the prompt is empty and the model has no BOS token", "prompt");
    return t;
  }
  if (!render_chat_) {
    throw ApiError(400, "this model has no chat template: start qmm serve with --chat-template NAME|FILE", "messages");
  }
  std::string text;
  try {
    text = render_chat_(r.messages);
  } catch (const Error& e) {
    throw ApiError(400, std::string("the chat template cannot render these messages: ") + e.what(), "messages");
  }
  // Templates that write the BOS token themselves get no second one.
  const bool has_bos = tok_.bos() >= 0 && text.rfind(tok_.text(tok_.bos()), 0) == 0;
  return tok_.encode(text, tok_.add_bos() && !has_bos);
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
  if (r.endpoint == Endpoint::chat) p.stop_tokens = end_of_turn_;
  p.strip_leading_space = r.endpoint == Endpoint::chat || (r.prompt.empty() && r.prompt_ids.empty());
  return p;
}

std::shared_ptr<Job> EngineBackend::submit(Request r) {
  // Admission before the prompt is built: a request the queue would refuse costs no rendering,
  // and one render and tokenization at a time (each bounded by the template's limits) keeps
  // their memory from multiplying with concurrent requests.
  std::unique_lock render_lock(render_mu_);
  {
    std::lock_guard lock(mu_);
    if (!gen_) throw ApiError(503, "the server is shutting down");
    if (gen_->active() + gen_->waiting() >= opt_.n_slots + opt_.max_queue) {  // as GeneratorThread::submit
      throw ApiError(503, "all slots are busy and the queue is full; retry later");
    }
  }
  llm::Request g;
  g.prompt = prompt_tokens(r);
  render_lock.unlock();
  g.params = params(r);
  const bool chat = r.endpoint == Endpoint::chat;
  auto job = std::make_shared<Job>(std::move(r));
  // The callbacks run on the engine thread: they only hand text over (Job is thread-safe).
  std::weak_ptr<Job> weak = job;
  g.on_token = [weak](const llm::Piece& piece) {
    const std::shared_ptr<Job> j = weak.lock();
    if (!j || j->cancelled()) return false;
    if (!piece.text.empty()) j->emit(std::string(piece.text));
    return true;
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
                   chat ? "messages" : "prompt", "context_length_exceeded");
  }
  if (job->request().max_tokens == 0u) {  // the usage of the prompt only (lm-eval's scoring requests)
    job->finish(Finish::length, Usage{g.prompt.size(), 0});
    return job;
  }
  std::lock_guard lock(mu_);
  if (!gen_) throw ApiError(503, "the server is shutting down");
  std::optional<uint64_t> id;
  try {
    id = gen_->submit(std::move(g));
  } catch (const Error& e) {
    throw ApiError(400, e.what(), chat ? "messages" : "prompt");
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
