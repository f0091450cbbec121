// qmm serve: an OpenAI-compatible HTTP server (server/http_server.h) over one loaded model,
// its concurrent requests decoded together (server/engine_backend.h). Binds to 127.0.0.1
// unless --host says otherwise. SIGINT / SIGTERM drain it (readiness 503, new requests 503,
// in-flight ones finish within --shutdown-timeout, then exit 0); a second signal exits at once.
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
  std::string slots() const override { return loaded()->slots(); }
  std::string slot_action(const std::string& id, const std::string& action, const std::string& body) override {
    return loaded()->slot_action(id, action, body);
  }
  void shutdown() {  // running requests end (finish_reason "abort"); later ones get 503
    std::lock_guard lock(mu_);
    if (b_) b_->shutdown();
  }

 private:
  serve::EngineBackend* get() const {
    std::lock_guard lock(mu_);
    return b_;
  }
  const serve::EngineBackend& ready() const { return *loaded(); }
  serve::EngineBackend* loaded() const {
    serve::EngineBackend* b = get();
    if (!b) throw serve::ApiError(503, "Loading model", {}, "loading");
    return b;
  }
  mutable std::mutex mu_;
  serve::EngineBackend* b_ = nullptr;
};

}  // namespace

int cmd_serve(int argc, char** argv) {
  ModelFlags mf;
  KvFlags kv;
  std::string host = "127.0.0.1", api_key, chat_template, cors = "*", pooling, alias, slot_save_path;
  long long port = 8080, cache_ram = -2;  // -2: not given
  size_t slots = 4, n_ctx = 0, queue = 0, n_batch = 256, threads_http = 0, idle_timeout = 5, shutdown_timeout = 30;
  bool metrics = false;
  Args args("serve",
            "An OpenAI-compatible HTTP server: POST /v1/chat/completions, POST /v1/completions (streamed as\n"
            "server-sent events with \"stream\": true), POST /v1/embeddings, GET /v1/models, GET /health\n"
            "(readiness), GET /live, GET /metrics (with --metrics), llama-server's POST /tokenize and /detokenize,\n"
            "and a chat page at GET /. Concurrent requests are decoded together, one batched forward pass per\n"
            "step. SIGINT / SIGTERM drain it: /health and new requests answer 503, requests in flight finish\n"
            "(at most --shutdown-timeout), then it exits 0; a second signal exits at once.",
            argc - 1, argv + 1);
  mf.add_to(args);
  args.str("--host", &host, "ADDR", "address to listen on (default 127.0.0.1: this machine only)")
      .integer("--port", &port, "port (default 8080; 0 = any free port, printed at start)")
      .size("-np,--parallel", &slots, "slots: requests decoded together (default 4)")
      .count("-c,--ctx-size", &n_ctx, "KV cache positions shared by the slots, each n_ctx / np (default 0: the model's trained context, lowered to what fits in memory)")
      .size("-b,--batch-size", &n_batch, "prompt tokens prefilled per step beside the decoding slots (default 256)")
      .count("--queue", &queue, "requests that may wait for a slot before 503 (default 0: 2 x slots)")
      .str("--api-key", &api_key, "KEY", "require 'Authorization: Bearer KEY' or 'X-Api-Key: KEY' (all routes but /health and /live)")
      .str("--chat-template", &chat_template, "NAME|FILE", "chat template instead of the model's")
      .integer("--cache-ram", &cache_ram,
               "MiB of host RAM for the prompt cache shared by all requests (default 8192 as llama-server, lowered to a quarter of "
               "the memory available; 0 = off)")
      .str("--slot-save-path", &slot_save_path, "DIR", "directory of POST /slots/{id}?action=save|restore files (default: those actions are off)")
      .str("--cors", &cors, "ORIGINS",
           "browser origins allowed to call it: * (any, the default, as llama-server), a comma-separated list, or none")
      .str("--pooling", &pooling, "mean|last|cls",
           "how /v1/embeddings pools the final hidden states over the input: mean, last token or first token\n"
           "(default: the model's ARCH.pooling_type, else mean)")
      .no_effect("--embedding,--embeddings", "", "/v1/embeddings is always served, beside chat and completions")
      .str("-a,--alias", &alias, "NAME", "the model's name in /v1/models and in answers (default: the file's name)")
      .flag("--metrics", &metrics, "serve Prometheus metrics at GET /metrics (llama-server's flag; off by default)")
      .size("--threads-http", &threads_http, "HTTP workers: requests read and answered at once (default 2 x (np + queue) + 8)")
      .size("-to,--timeout", &idle_timeout, "seconds an idle keep-alive connection is kept open (default 5)")
      .count("--shutdown-timeout", &shutdown_timeout,
             "seconds requests in flight may take to finish after SIGTERM / SIGINT; then they end with finish_reason \"abort\" (default 30)");
  kv.add_to(args);
  args.parse();
  if (mf.path.empty()) throw UsageError("-m/--model is required");
  if (port < 0 || port > 65535) throw UsageError("--port must be in 0..65535");
  if (slots < 1 || slots > 64) throw UsageError("-np must be in 1..64");
  if (cache_ram == -1) throw UsageError("--cache-ram -1 (no limit) is not supported: give a size in MiB, or 0 for no prompt cache");
  if (cache_ram < -2 || cache_ram > (1LL << 30)) throw UsageError("--cache-ram must be a size in MiB (0 = off)");
  if (!slot_save_path.empty() && !std::filesystem::is_directory(slot_save_path)) {
    throw UsageError("--slot-save-path '" + slot_save_path + "' is not a directory");
  }
  if (queue == 0) queue = 2 * slots;
  if (threads_http > 1024) throw UsageError("--threads-http must be in 1..1024");
  if (idle_timeout > 86400) throw UsageError("-to/--timeout must be in 1..86400 seconds");
  if (shutdown_timeout > 86400) throw UsageError("--shutdown-timeout must be in 0..86400 seconds");
  std::optional<llm::Pooling> pool = llm::parse_pooling(pooling);
  if (!pool && !pooling.empty()) throw UsageError("--pooling must be mean, last or cls, got '" + pooling + "'");
  serve::limit_malloc_retention();

  // SIGINT / SIGTERM are taken by one thread (sigtimedwait), so no other thread is interrupted.
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
  opt.model_id = alias.empty() ? std::filesystem::path(mf.path).stem().string() : alias;
  // HTTP workers (idle connections hold none)
  opt.threads = threads_http ? threads_http : std::min<size_t>(256, 2 * (slots + queue) + 8);
  opt.idle_timeout = std::chrono::seconds(idle_timeout);
  std::unique_ptr<serve::ServeMetrics> counted = metrics ? std::make_unique<serve::ServeMetrics>() : nullptr;
  LoadingBackend front;
  serve::HttpServer server(front, opt, counted.get());
  const int bound = server.bind();

  std::atomic<bool> signalled{false}, quitting{false}, run_ended{false}, finished{false};
  auto stop_server = [&] {  // a stop() before run() has started serving would be lost
    while (!server.running() && !run_ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server.stop();
  };
  // The next SIGINT / SIGTERM within `wait` (0: none came).
  auto next_signal = [&stop_signals](std::chrono::milliseconds wait) {
    const timespec ts{static_cast<time_t>(wait.count() / 1000), static_cast<long>(wait.count() % 1000) * 1000000};
    const int sig = sigtimedwait(&stop_signals, nullptr, &ts);
    return sig > 0 ? sig : 0;
  };
  auto exit_now = [](int sig) {  // a second signal: no more waiting
    std::fprintf(stderr, "qmm serve: a second %s, exiting now\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    std::_Exit(128 + sig);
  };
  std::thread waiter([&] {
    int sig = 0;
    while (!sig) {
      if (run_ended || quitting) return;  // run() ended by itself, or the model did not load
      sig = next_signal(std::chrono::milliseconds(100));
    }
    signalled = true;
    // The drain: readiness and new requests 503, requests in flight go on until done or the
    // timeout; what is left then ends with finish_reason "abort" (the backend's shutdown).
    server.drain();
    std::fprintf(stderr, "qmm serve: %s, draining: %zu requests in flight (at most %zu s; a second signal exits at once)\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM", server.in_flight(), shutdown_timeout);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(shutdown_timeout);
    while (server.in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
      if (const int again = next_signal(std::chrono::milliseconds(20))) exit_now(again);
    }
    if (const size_t left = server.in_flight()) {
      std::fprintf(stderr, "qmm serve: --shutdown-timeout reached: %zu requests end with finish_reason \"abort\"\n", left);
    }
    // The stop may take a while (an engine step to end, workers finishing their writes to
    // slow clients): on its own thread, so that a second signal still exits at once.
    std::thread stopper([&] {
      front.shutdown();
      stop_server();  // the workers finish writing what they answer, then the listener closes
    });
    while (!finished) {
      if (const int again = next_signal(std::chrono::milliseconds(100))) exit_now(again);
    }
    stopper.join();
  });
  std::thread http([&] {
    server.run();
    run_ended = true;
  });
  auto stop_threads = [&] {  // the model did not load: the error is the message
    quitting = true;
    stop_server();
    http.join();
    finished = true;
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
    gopt.cache_bytes = cache_ram >= 0 ? static_cast<size_t>(cache_ram) << 20 : std::min<size_t>(size_t{8192} << 20, available_memory() / 4);
    backend = std::make_unique<serve::EngineBackend>(*lm->model, *lm->tok, *lm->ctx, gopt, std::move(chat), counted.get());
    if (!pool) {
      try {
        pool = llm::model_pooling(*lm->model).value_or(llm::Pooling::mean);
      } catch (const Error& e) {  // (a reranker's "rank"): chat and completions still work
        std::fprintf(stderr, "qmm serve: %s; /v1/embeddings pools by mean (--pooling)\n", e.what());
        pool = llm::Pooling::mean;
      }
    }
    backend->set_pooling(*pool);
    backend->set_slot_save_path(slot_save_path);
    if (!backend->cache_off_reason().empty()) {
      std::fprintf(stderr, "qmm serve: %s\n", backend->cache_off_reason().c_str());
    } else if (gopt.cache_bytes > 0) {
      std::fprintf(stderr, "qmm serve: prompt cache of up to %zu MiB in host RAM (--cache-ram)\n", gopt.cache_bytes >> 20);
    }
    front.set(backend.get());
    const std::string url_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;  // an IPv6 address
    if (!signalled) {  // (a signal during the load has stopped the listener already)
      std::printf("qmm serve: %s on http://%s:%d (%zu slots of %zu tokens, %zu threads)\n", opt.model_id.c_str(),
                  url_host.c_str(), bound, slots, gopt.n_ctx, lm->threads);
      std::fflush(stdout);
    }
  } catch (...) {
    stop_threads();
    throw;
  }
  http.join();
  finished = true;
  waiter.join();
  front.set(nullptr);
  return 0;
}

}  // namespace qmm::cli
