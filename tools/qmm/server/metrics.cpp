#include "metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace qmm::serve {
namespace {

// A sample value as Prometheus reads it: integers without a fraction, others in full precision.
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", v);
  }
  return buf;
}

std::string with_labels(const std::string& name, const std::string& labels) {
  return labels.empty() ? name : name + "{" + labels + "}";
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end())) throw std::logic_error("histogram bounds must ascend");
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double v) {
  const size_t bucket = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.add(v);
}

std::vector<uint64_t> Histogram::cumulative() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) out[i] = total += counts_[i].load(std::memory_order_relaxed);
  return out;
}

Registry::Series& Registry::series(std::string_view name, std::string_view help, Kind kind, std::string_view labels) {
  auto fam = std::find_if(families_.begin(), families_.end(), [&](const Family& f) { return f.name == name; });
  if (fam == families_.end()) {
    families_.push_back(Family{std::string(name), std::string(help), kind, {}});
    fam = families_.end() - 1;
  } else if (fam->kind != kind) {
    throw std::logic_error("metric " + std::string(name) + " registered twice as different kinds");
  }
  for (Series& s : fam->series) {
    if (s.labels == labels) return s;
  }
  fam->series.push_back(Series{std::string(labels), nullptr, nullptr, nullptr});
  return fam->series.back();
}

Value& Registry::counter(std::string_view name, std::string_view help, std::string_view labels) {
  std::lock_guard lock(mu_);
  Series& s = series(name, help, Kind::counter, labels);
  if (!s.value) s.value = std::make_unique<Value>();
  return *s.value;
}

Value& Registry::gauge(std::string_view name, std::string_view help, std::string_view labels) {
  std::lock_guard lock(mu_);
  Series& s = series(name, help, Kind::gauge, labels);
  if (!s.value && !s.fn) s.value = std::make_unique<Value>();
  if (!s.value) throw std::logic_error("metric " + std::string(name) + " is computed, not set");
  return *s.value;
}

Histogram& Registry::histogram(std::string_view name, std::string_view help, std::vector<double> upper_bounds) {
  std::lock_guard lock(mu_);
  Series& s = series(name, help, Kind::histogram, {});
  if (!s.hist) s.hist = std::make_unique<Histogram>(std::move(upper_bounds));
  return *s.hist;
}

void Registry::computed(std::string_view name, std::string_view help, Kind kind, std::function<double()> fn) {
  std::lock_guard lock(mu_);
  Series& s = series(name, help, kind, {});
  if (s.value) throw std::logic_error("metric " + std::string(name) + " is set, not computed");
  s.fn = std::move(fn);
}

std::string Registry::render() const {
  std::lock_guard lock(mu_);
  std::string out;
  out.reserve(4096);
  for (const Family& f : families_) {
    static constexpr const char* kType[] = {"counter", "gauge", "histogram"};
    out += "# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " " + kType[static_cast<int>(f.kind)] + "\n";
    for (const Series& s : f.series) {
      if (s.hist) {
        const std::vector<uint64_t> c = s.hist->cumulative();
        const std::vector<double>& b = s.hist->bounds();
        for (size_t i = 0; i < b.size(); ++i) {
          out += f.name + "_bucket{le=\"" + number(b[i]) + "\"} " + std::to_string(c[i]) + "\n";
        }
        out += f.name + "_bucket{le=\"+Inf\"} " + std::to_string(c.back()) + "\n";
        out += f.name + "_sum " + number(s.hist->sum()) + "\n";
        out += f.name + "_count " + std::to_string(c.back()) + "\n";
        continue;
      }
      out += with_labels(f.name, s.labels) + " " + number(s.fn ? s.fn() : s.value->get()) + "\n";
    }
  }
  return out;
}

ServeMetrics::ServeMetrics()
    : prompt_tokens(registry.counter("llamacpp:prompt_tokens_total", "Prompt tokens prefilled (those found in the cache not included).")),
      prompt_seconds(registry.counter("llamacpp:prompt_seconds_total", "Seconds spent prefilling prompts.")),
      cached_prompt_tokens(registry.counter("qmm:prompt_tokens_cached_total",
                                            "Prompt tokens found in the KV cache (not processed again).")),
      predicted_tokens(registry.counter("llamacpp:tokens_predicted_total", "Tokens generated.")),
      predicted_seconds(registry.counter("llamacpp:tokens_predicted_seconds_total", "Seconds from each request's first generated token to its end, summed.")),
      time_to_first_token(registry.histogram(
          "qmm:time_to_first_token_seconds", "Time from a request's arrival to its first generated token.",
          {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60})),
      inter_token_latency(registry.histogram(
          "qmm:inter_token_latency_seconds", "Time between two generated tokens of one request.",
          {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5})) {
  registry.gauge_fn("llamacpp:prompt_tokens_seconds", "Prefill speed: prompt tokens per second of prefill.", [this] {
    const double s = prompt_seconds.get();
    return s > 0 ? prompt_tokens.get() / s : 0.0;
  });
  registry.gauge_fn("llamacpp:predicted_tokens_seconds", "Decode speed of one request: generated tokens per second of its decoding.", [this] {
    const double s = predicted_seconds.get();
    return s > 0 ? predicted_tokens.get() / s : 0.0;
  });
  // Each finish reason from the start, at 0: a series that appears late loses its first rate().
  for (const char* reason : {"stop", "length", "cancelled", "error"}) reasons_.push_back({reason, &finished_series(reason)});
  answered_series(200);
}

void ServeMetrics::finished(std::string_view reason) {
  for (const Reason& r : reasons_) {
    if (r.name == reason) return r.series->add();
  }
  finished_series(reason).add();
}

Value& ServeMetrics::finished_series(std::string_view reason) {
  return registry.counter("qmm:requests_finished_total", "Requests ended, by finish reason.",
                          "finish_reason=\"" + std::string(reason) + "\"");
}

Value& ServeMetrics::answered_series(int status) {
  return registry.counter("qmm:http_requests_total", "HTTP answers, by status code.",
                          "code=\"" + std::to_string(status) + "\"");
}

}  // namespace qmm::serve
