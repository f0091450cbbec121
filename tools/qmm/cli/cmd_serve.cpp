// qmm serve: an OpenAI-compatible HTTP server (server/http_server.h) over one loaded model,
// its concurrent requests decoded together (server/engine_backend.h). Binds to 127.0.0.1
// unless --host says otherwise; SIGINT / SIGTERM stop it cleanly.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "args.h"
#include "core/error.h"
#include "text/chat.h"
#include "llm_session.h"
#include "qmm/server/engine_backend.h"
#include "verbs.h"

namespace qmm::cli {
namespace {

// The chat format `qmm chat` uses: --chat-template, else the model's own template; a model
// without one still serves /v1/completions (chat requests are a 400 naming --chat-template).
std::optional<llm::ChatFormat> chat_format(const std::string& chat_template, const LoadedModel& lm) {
  try {
    return llm::ChatFormat::from_model(lm.model->file(), *lm.tok, chat_template);
  } catch (const Error& e) {
    if (!chat_template.empty()) throw;
    std::fprintf(stderr, "qmm serve: %s; /v1/chat/completions answers 400 without one\n", e.what());
    return std::nullopt;
  }
}

// What the HTTP server talks to while the model loads (llama-server's behaviour: /health and
// requests answer 503 "Loading model"), then the model's backend.
class LoadingBackend : public serve::Backend {
 public:
  void set(serve::EngineBackend* b) {
    std::lock_guard lock(mu_);
    b_ = b;
  }
  std::shared_ptr<serve::Job> submit(serve::Request r) override {
    serve::EngineBackend* b = get();
    if (!b) throw serve::ApiError(503, "Loading model", {}, "loading");
    return b->submit(std::move(r));
  }
  serve::Load load() const override {
    serve::EngineBackend* b = get();
    if (!b) return serve::Load{0, 0, 0, 0, true};
    return b->load();
  }
  std::vector<int32_t> tokenize(const std::string& text, bool add_special) const override {
    return ready().tokenize(text, add_special);
  }
  std::string token_piece(int32_t id) const override { return ready().token_piece(id); }
  std::string detokenize(const std::vector<int32_t>& ids) const override { return ready().detokenize(ids); }
  size_t embedding_size() const override { return ready().embedding_size(); }
  void shutdown() {  // running requests end (their clients get an error); later ones get 503
    std::lock_guard lock(mu_);
    if (b_) b_->shutdown();
  }

 private:
  serve::EngineBackend* get() const {
    std::lock_guard lock(mu_);
    return b_;
  }
  const serve::EngineBackend& ready() const {
    const serve::EngineBackend* b = get();
    if (!b) throw serve::ApiError(503, "Loading model", {}, "loading");
    return *b;
  }
  mutable std::mutex mu_;
  serve::EngineBackend* b_ = nullptr;
};

}  // namespace

int cmd_serve(int argc, char** argv) {
  ModelFlags mf;
  KvFlags kv;
  std::string host = "127.0.0.1", api_key, chat_template, cors = "*", pooling = "mean";
  long long port = 8080;
  size_t slots = 4, n_ctx = 0, queue = 0, n_batch = 256;
  Args args("serve",
            "An OpenAI-compatible HTTP server: POST /v1/chat/completions, POST /v1/completions (streamed as\n"
            "server-sent events with \"stream\": true), POST /v1/embeddings, GET /v1/models, GET /health,\n"
            "llama-server's POST /tokenize and /detokenize, and a chat page at GET /. Concurrent requests are\n"
            "decoded together, one batched forward pass per step. SIGINT / SIGTERM stop it.",
            argc - 1, argv + 1);
  mf.add_to(args);
  args.str("--host", &host, "ADDR", "address to listen on (default 127.0.0.1: this machine only)")
      .integer("--port", &port, "port (default 8080; 0 = any free port, printed at start)")
      .size("-np,--parallel", &slots, "slots: requests decoded together (default 4)")
      .count("-c,--ctx-size", &n_ctx, "KV cache positions shared by the slots, each n_ctx / np (default 0: the model's trained context, lowered to what fits in memory)")
      .size("-b,--batch-size", &n_batch, "prompt tokens prefilled per step beside the decoding slots (default 256)")
      .count("--queue", &queue, "requests that may wait for a slot before 503 (default 0: 2 x slots)")
      .str("--api-key", &api_key, "KEY", "require 'Authorization: Bearer KEY' or 'X-Api-Key: KEY' (all routes but /health)")
      .str("--chat-template", &chat_template, "NAME|FILE", "chat template instead of the model's")
      .str("--cors", &cors, "ORIGINS",
           "browser origins allowed to call it: * (any, the default, as llama-server), a comma-separated list, or none")
      .str("--pooling", &pooling, "mean|last|cls",
           "how /v1/embeddings pools the final hidden states over the input: mean (default), last token, first token")
      .no_effect("--embedding,--embeddings", "", "/v1/embeddings is always served, beside chat and completions");
  kv.add_to(args);
  args.parse();
  if (mf.path.empty()) throw UsageError("-m/--model is required");
  if (port < 0 || port > 65535) throw UsageError("--port must be in 0..65535");
  if (slots < 1 || slots > 64) throw UsageError("-np must be in 1..64");
  if (queue == 0) queue = 2 * slots;
  const std::optional<llm::Pooling> pool = llm::parse_pooling(pooling);
  if (!pool) throw UsageError("--pooling must be mean, last or cls, got '" + pooling + "'");
  serve::limit_malloc_retention();

  // SIGINT / SIGTERM are taken by one thread (sigwait), so no other thread is interrupted.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error return, not a signal

  if (!chat_template.empty()) llm::resolve_chat_template(chat_template);  // a bad one fails before the load
  // The server listens before the model loads: a port in use fails at once, and /health says
  // 503 "Loading model" meanwhile (llama-server). The line "... on http://HOST:PORT" comes once
  // the model is ready.
  serve::ServerOptions opt;
  opt.host = host;
  opt.port = static_cast<int>(port);
  opt.api_key = api_key;
  opt.cors = cors == "none" ? "" : cors;
  opt.model_id = std::filesystem::path(mf.path).stem().string();
  opt.threads = std::min<size_t>(256, 2 * (slots + queue) + 8);  // HTTP workers (idle connections hold none)
  LoadingBackend front;
  serve::HttpServer server(front, opt);
  const int bound = server.bind();

  std::atomic<bool> signalled{false}, quitting{false}, run_ended{false};
  auto stop_server = [&] {  // a stop() before run() has started serving would be lost
    while (!server.running() && !run_ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server.stop();
  };
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    signalled = true;
    if (!quitting) std::fprintf(stderr, "qmm serve: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    front.shutdown();  // running requests end (their clients get an error), then the listener
    stop_server();
  });
  std::thread http([&] {
    server.run();
    run_ended = true;
    if (!signalled) pthread_kill(waiter.native_handle(), SIGTERM);  // run() ended by itself: release the waiter
  });
  auto stop_threads = [&] {  // the model did not load: the error is the message
    quitting = true;
    stop_server();
    http.join();
    waiter.join();
  };

  std::unique_ptr<LoadedModel> lm;
  std::unique_ptr<serve::EngineBackend> backend;
  try {
    lm = std::make_unique<LoadedModel>(LoadedModel::load(mf));
    std::optional<llm::ChatFormat> chat = chat_format(chat_template, *lm);
    llm::GeneratorOptions gopt;
    gopt.n_slots = slots;
    // As llama-server: -c is the total of the slots' caches, each slot holding -c / -np positions.
    const size_t total = lm->context(n_ctx, kv.types());
    gopt.n_ctx = total / slots;
    if (gopt.n_ctx < 8) {
      throw UsageError("-c " + std::to_string(total) + " leaves fewer than 8 positions to each of the " + std::to_string(slots) + " slots");
    }
    gopt.n_batch = n_batch;
    gopt.max_queue = queue;
    gopt.kv = kv.types();
    backend = std::make_unique<serve::EngineBackend>(*lm->model, *lm->tok, *lm->ctx, gopt, std::move(chat));
    backend->set_pooling(*pool);
    front.set(backend.get());
    const std::string url_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;  // an IPv6 address
    std::printf("qmm serve: %s on http://%s:%d (%zu slots of %zu tokens, %zu threads)\n", opt.model_id.c_str(),
                url_host.c_str(), bound, slots, gopt.n_ctx, lm->threads);
    std::fflush(stdout);
  } catch (...) {
    stop_threads();
    throw;
  }
  http.join();
  waiter.join();
  front.set(nullptr);
  return 0;
}

}  // namespace qmm::cli
