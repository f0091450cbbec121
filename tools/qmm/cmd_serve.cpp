// qmm serve: an OpenAI-compatible HTTP server (server/http_server.h) over a loaded model.
// Binds to 127.0.0.1 unless --host says otherwise; SIGINT / SIGTERM stop it cleanly.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "args.h"
#include "core/error.h"
#include "server/http_server.h"
#include "verbs.h"

namespace qmm::cli {
namespace {

// Until the batched generation engine is connected, every generation request is refused.
class Unconnected : public serve::Backend {
 public:
  explicit Unconnected(size_t slots) : slots_(slots) {}
  std::shared_ptr<serve::Job> submit(serve::Request) override {
    throw serve::ApiError(503, "generation is not connected in this build yet");
  }
  serve::Load load() const override { return {slots_, 0, 0}; }

 private:
  size_t slots_;
};

}  // namespace

int cmd_serve(int argc, char** argv) {
  std::string model_path, host = "127.0.0.1", api_key, chat_template, kernels, disable;
  long long port = 8080;
  size_t slots = 4, n_ctx = 0, threads = 0, queue = 0;
  Args args("serve",
            "An OpenAI-compatible HTTP server: POST /v1/chat/completions, POST /v1/completions (streamed as\n"
            "server-sent events with \"stream\": true), GET /v1/models, GET /health. Concurrent requests are\n"
            "decoded together, one batched forward pass per step. SIGINT / SIGTERM stop it.",
            argc - 1, argv + 1);
  args.str("-m,--model", &model_path, "FILE", "GGUF model (required)")
      .str("--host", &host, "ADDR", "address to listen on (default 127.0.0.1: this machine only)")
      .integer("--port", &port, "port (default 8080; 0 = any free port, printed at start)")
      .size("-np,--parallel", &slots, "slots: requests decoded together (default 4)")
      .count("-c,--ctx-size", &n_ctx, "context per slot in tokens (default 0: the model's, at most 4096)")
      .count("--queue", &queue, "requests that may wait for a slot before 503 (default 0: 2 x slots)")
      .str("--api-key", &api_key, "KEY", "require 'Authorization: Bearer KEY' (all routes but /health)")
      .str("--chat-template", &chat_template, "NAME|FILE", "chat template instead of the model's")
      .count("-t,--threads", &threads, "threads (default 0: all cores; one for models under 16 MiB)")
      .str("--kernels", &kernels, "LIST", "allow only these ISAs / variants (like QMM_KERNELS)")
      .str("--disable", &disable, "LIST", "exclude these ISAs / variants (like QMM_DISABLE)");
  args.parse();
  if (model_path.empty()) throw UsageError("-m/--model is required");
  if (port < 0 || port > 65535) throw UsageError("--port must be in 0..65535");
  if (slots > 64) throw UsageError("-np must be at most 64");
  if (threads > 1024) throw UsageError("-t must be at most 1024");
  if (queue == 0) queue = 2 * slots;

  // SIGINT / SIGTERM are taken by one thread (sigwait), so no other thread is interrupted.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error return, not a signal

  Unconnected backend(slots);
  serve::ServerOptions opt;
  opt.host = host;
  opt.port = static_cast<int>(port);
  opt.api_key = api_key;
  opt.model_id = std::filesystem::path(model_path).stem().string();
  opt.threads = std::min<size_t>(256, 2 * (slots + queue) + 8);
  serve::HttpServer server(backend, opt);
  const int bound = server.bind();
  std::printf("qmm serve: %s on http://%s:%d (%zu slots)\n", opt.model_id.c_str(), host.c_str(), bound, slots);
  std::fflush(stdout);

  std::atomic<bool> signalled{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    signalled = true;
    std::fprintf(stderr, "qmm serve: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    server.stop();
  });
  server.run();
  if (!signalled) pthread_kill(waiter.native_handle(), SIGTERM);  // run() ended by itself: release the waiter
  waiter.join();
  return 0;
}

}  // namespace qmm::cli
