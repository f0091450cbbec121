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

#include "http_server.h"
#include "llm/generate.h"
#include "text/chat.h"

namespace qmm::serve {

class EngineBackend : public Backend {
 public:
  // model, tok and ctx must outlive the backend. Chat requests are rendered by `chat` (the
  // format `qmm chat` uses); without one they are a 400 that names --chat-template.
  EngineBackend(const llm::Model& model, const llm::Tokenizer& tok, Context& ctx, const llm::GeneratorOptions& opt,
                std::optional<llm::ChatFormat> chat);
  ~EngineBackend() override;

  std::shared_ptr<Job> submit(Request r) override;
  Load load() const override;
  std::vector<int32_t> tokenize(const std::string& text, bool add_special) const override;
  std::string token_piece(int32_t id) const override;
  std::string detokenize(const std::vector<int32_t>& ids) const override;
  size_t embedding_size() const override { return n_embd_; }
  // How /v1/embeddings pools the hidden states (qmm serve --pooling; mean by default).
  void set_pooling(llm::Pooling p) { pooling_ = p; }
  // Ends every queued and running request (their clients get an error) and refuses new ones.
  void shutdown();

  // The prompt tokens of a request, as submit() builds them (tests).
  std::vector<int32_t> prompt_tokens(const Request& r) const;

 private:
  llm::GenerateParams params(const Request& r) const;
  void check_fits(size_t prompt_bytes, const char* param) const;  // 400 if it cannot fit a slot

  const llm::Tokenizer& tok_;
  llm::GeneratorOptions opt_;
  std::optional<llm::ChatFormat> chat_;
  std::atomic<size_t> cancelled_{0};  // by their clients
  mutable std::mutex mu_;             // guards gen_ (reset by shutdown())
  mutable std::mutex long_mu_;        // one long prompt built at a time
  size_t max_token_bytes_ = 1;        // the longest token text
  size_t n_embd_;
  llm::Pooling pooling_ = llm::Pooling::mean;
  void check_ids(const std::vector<int32_t>& ids, const char* param) const;  // 400 outside the vocabulary
  std::unique_ptr<llm::GeneratorThread> gen_;
};

}  // namespace qmm::serve
