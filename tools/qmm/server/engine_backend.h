// The model side of `qmm serve`: requests become prompts (the chat template for
// /v1/chat/completions, the text as is for /v1/completions), go to the batched generator's
// engine thread (llm::GeneratorThread: one forward pass per step over every active slot) and
// come back to the HTTP thread as Job events.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http_server.h"
#include "llm/generate.h"

namespace qmm::serve {

// Renders a conversation into prompt text with the generation prompt appended (the chat
// template); may throw qmm::Error, answered as a 400.
using ChatRenderer = std::function<std::string(const std::vector<Turn>&)>;

class EngineBackend : public Backend {
 public:
  // model, tok and ctx must outlive the backend. Without a renderer, chat requests are a 400
  // that names --chat-template.
  EngineBackend(const llm::Model& model, const llm::Tokenizer& tok, Context& ctx, const llm::GeneratorOptions& opt,
                ChatRenderer render_chat);
  ~EngineBackend() override;

  std::shared_ptr<Job> submit(Request r) override;
  Load load() const override;
  // Ends every queued and running request (their clients get an error) and refuses new ones.
  void shutdown();

  // The prompt tokens of a request, as submit() builds them (tests).
  std::vector<int32_t> prompt_tokens(const Request& r) const;

 private:
  llm::GenerateParams params(const Request& r) const;

  const llm::Tokenizer& tok_;
  llm::GeneratorOptions opt_;
  ChatRenderer render_chat_;
  std::vector<int32_t> end_of_turn_;  // the chat templates' end-of-turn tokens in this vocabulary
  std::atomic<size_t> cancelled_{0};  // by their clients
  mutable std::mutex mu_;             // guards gen_ (reset by shutdown())
  std::mutex render_mu_;              // one prompt built at a time (submit())
  std::unique_ptr<llm::GeneratorThread> gen_;
};

}  // namespace qmm::serve
