// The metrics of `qmm serve` (GET /metrics, with --metrics): a small registry of counters,
// gauges and histograms in the Prometheus text format, and ServeMetrics, the one table of what
// qmm serve reports. Bumping a series is lock-free (relaxed atomics), so the engine thread can
// count every token; only registering a series and rendering take the registry's lock.
// Names follow llama-server's `llamacpp:*` where it has the metric, `qmm:*` otherwise.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace qmm::serve {

// A counter or a gauge: one number, bumped from any thread.
class Value {
 public:
  void add(double v = 1) { v_.fetch_add(v, std::memory_order_relaxed); }
  void set(double v) { v_.store(v, std::memory_order_relaxed); }
  double get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

// Observations counted in buckets of fixed upper bounds (ascending; +Inf is implied).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double v);
  std::vector<uint64_t> cumulative() const;  // per bound, then +Inf (= the count)
  const std::vector<double>& bounds() const { return bounds_; }
  double sum() const { return sum_.get(); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // per bucket, not cumulative; the last is +Inf
  Value sum_;
};

class Registry {
 public:
  // A series of family `name` with `labels` (`key="value",...` as written in the exposition,
  // values already escaped; may be empty), registered on first use; later calls return the
  // same one. References stay valid for the registry's life.
  // Throws std::logic_error if `name` was registered as another kind.
  Value& counter(std::string_view name, std::string_view help, std::string_view labels = {});
  Value& gauge(std::string_view name, std::string_view help, std::string_view labels = {});
  Histogram& histogram(std::string_view name, std::string_view help, std::vector<double> upper_bounds);
  // A gauge computed at each scrape (e.g. a ratio of two counters, or a queue's length).
  void gauge_fn(std::string_view name, std::string_view help, std::function<double()> fn) {
    computed(name, help, Kind::gauge, std::move(fn));
  }
  // A counter kept elsewhere (e.g. by the engine), read at each scrape.
  void counter_fn(std::string_view name, std::string_view help, std::function<double()> fn) {
    computed(name, help, Kind::counter, std::move(fn));
  }

  std::string render() const;  // the text exposition format, version 0.0.4

 private:
  enum class Kind { counter, gauge, histogram };
  struct Series {
    std::string labels;
    std::unique_ptr<Value> value;
    std::unique_ptr<Histogram> hist;
    std::function<double()> fn;
  };
  struct Family {
    std::string name, help;
    Kind kind;
    std::vector<Series> series;
  };
  Series& series(std::string_view name, std::string_view help, Kind kind, std::string_view labels);
  void computed(std::string_view name, std::string_view help, Kind kind, std::function<double()> fn);

  mutable std::mutex mu_;
  std::vector<Family> families_;  // in registration order, which is the order rendered
};

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// What qmm serve counts. The engine side bumps the token counters, the latency histograms and
// the finish reasons; the HTTP side counts answers by status. Gauges of the engine's state
// (requests running and waiting, KV-cache use) are read from the backend at each scrape.
struct ServeMetrics {
  ServeMetrics();
  Registry registry;
  Value& prompt_tokens;         // prompt tokens prefilled (cached ones not included)
  Value& prompt_seconds;        // time spent prefilling them
  Value& cached_prompt_tokens;  // prompt tokens found in a slot's cache (not prefilled)
  Value& predicted_tokens;      // tokens generated
  Value& predicted_seconds;     // time from each request's first token to its end
  Histogram& time_to_first_token;  // request received -> its first token, seconds
  Histogram& inter_token_latency;  // between two tokens of one request, seconds
  // Requests ended, by finish reason ("stop", "length", "cancelled", "error").
  void finished(std::string_view reason);
  // HTTP answers by status code.
  void answered(int status) { answered_series(status).add(); }

 private:
  Value& finished_series(std::string_view reason);
  Value& answered_series(int status);
  // The engine's finish reasons, found without the registry's lock (the engine thread counts).
  struct Reason {
    std::string_view name;
    Value* series;
  };
  std::vector<Reason> reasons_;
};

}  // namespace qmm::serve
