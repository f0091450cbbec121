// One request in flight, shared by the HTTP thread that answers it and the engine thread that
// generates it: the engine appends events (pieces of text, then the end), the HTTP thread
// takes them and may cancel (a client gone mid-stream), which frees the slot at the next step.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "protocol.h"

namespace qmm::serve {

struct Event {
  std::string text;        // a piece of the reply (may be empty)
  bool done = false;       // the last event: finish and usage are set, or error
  Finish finish = Finish::stop;
  Usage usage;
  std::string error;       // non-empty: generation failed (HTTP 500 or an error chunk)
  std::vector<TokenLogprob> logprobs;  // of the tokens of this event (requests with logprobs)
  std::vector<float> embedding;        // an embedding request's vector (before its done event)
};

class Job {
 public:
  explicit Job(Request r) : request_(std::move(r)) {}
  const Request& request() const { return request_; }

  // Engine side.
  void emit(std::string text, std::vector<TokenLogprob> logprobs = {}) {
    Event e;
    e.text = std::move(text);
    e.logprobs = std::move(logprobs);
    push(std::move(e));
  }
  void emit_embedding(std::vector<float> v) {
    Event e;
    e.embedding = std::move(v);
    push(std::move(e));
  }
  void finish(Finish f, Usage u) { push(Event{{}, true, f, u, {}, {}, {}}); }
  void fail(std::string message) { push(Event{{}, true, Finish::stop, {}, std::move(message), {}, {}}); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

  // HTTP side: the next event, or false when none came within `timeout`.
  bool next(Event& e, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [this] { return !events_.empty(); })) return false;
    e = std::move(events_.front());
    events_.pop_front();
    return true;
  }
  // Cancels the job (once): the canceller, set by the backend that queued it, tells the engine.
  void cancel() {
    if (cancelled_.exchange(true)) return;
    if (canceller_) canceller_();
  }
  void set_canceller(std::function<void()> f) { canceller_ = std::move(f); }

 private:
  void push(Event e) {
    {
      std::lock_guard lock(mu_);
      events_.push_back(std::move(e));
    }
    cv_.notify_one();
  }
  Request request_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  std::atomic<bool> cancelled_{false};
  std::function<void()> canceller_;  // set and called on the HTTP thread
};

}  // namespace qmm::serve
