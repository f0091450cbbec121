// The model side of `qmm serve`: requests become prompts (the chat template for
// /v1/chat/completions, the text as is for /v1/completions), go to the batched generator's
// engine thread (llm::GeneratorThread: one forward pass per step over every active slot) and
// come back to the HTTP thread as Job events.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "grammar_cache.h"
#include "http_server.h"
#include "llm/generate.h"
#include "text/chat.h"

namespace qmm::serve {

class EngineBackend : public Backend {
 public:
  // model, tok and ctx must outlive the backend. Chat requests are rendered by `chat` (the
  // format `qmm chat` uses); without one they are a 400 that names --chat-template. With
  // `metrics` (it must outlive the backend) each request's tokens, latencies and end are counted.
  EngineBackend(const llm::Model& model, const llm::Tokenizer& tok, Context& ctx, const llm::GeneratorOptions& opt,
                std::optional<llm::ChatFormat> chat, ServeMetrics* metrics = nullptr);
  ~EngineBackend() override;

  std::shared_ptr<Job> submit(Request r) override;
  Load load() const override;
  std::vector<int32_t> tokenize(const std::string& text, bool add_special) const override;
  std::string token_piece(int32_t id) const override;
  std::string detokenize(const std::vector<int32_t>& ids) const override;
  size_t embedding_size() const override { return n_embd_; }
  // How /v1/embeddings pools the hidden states (qmm serve --pooling; mean by default).
  void set_pooling(llm::Pooling p) { pooling_ = p; }
  std::string slots() const override;  // slots.cpp
  std::string slot_action(const std::string& id, const std::string& action, const std::string& body) override;
  // Where POST /slots/{id}?action=save|restore writes and reads ("": those actions are a 501).
  void set_slot_save_path(std::string dir);
  // Why the prompt cache asked for is off ("" when it is on or was not asked for).
  std::string cache_off_reason() const { return cache_off_; }
  // Ends every queued and running request and refuses new ones: each gets finish_reason
  // "abort" with the text it has so far.
  void shutdown();

  size_t grammars_compiled() const { return grammars_.compiled(); }  // (tests)
  // The prompt tokens of a request, as submit() builds them (tests).
  std::vector<int32_t> prompt_tokens(const Request& r) const;

 private:
  llm::GenerateParams params(const Request& r) const;
  void check_fits(size_t prompt_bytes, const char* param) const;  // 400 if it cannot fit a slot

  const llm::Tokenizer& tok_;
  llm::GeneratorOptions opt_;
  std::optional<llm::ChatFormat> chat_;
  ServeMetrics* metrics_;
  std::atomic<size_t> cancelled_{0};  // by their clients
  mutable std::mutex mu_;             // guards gen_ (reset by shutdown())
  mutable std::mutex long_mu_;        // one long prompt built at a time
  size_t max_token_bytes_ = 1;        // the longest token text
  size_t n_embd_;
  llm::Pooling pooling_ = llm::Pooling::mean;
  void check_ids(const std::vector<int32_t>& ids, const char* param) const;  // 400 outside the vocabulary
  std::unique_ptr<llm::GeneratorThread> gen_;
  mutable GrammarCache grammars_;     // compiled once per distinct grammar
  std::string slot_save_path_;
  std::string cache_off_;
};

}  // namespace qmm::serve
