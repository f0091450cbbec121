// The tuning file and the paired statistics (tune_internal.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "matmul/tune_internal.h"

namespace qmm::tune_detail {
namespace {

// Version 1 holds per-class lines; version 2 adds the whole-step lines ("step ..."). A version 1
// file is read (its per-class lines); anything else is another program's and is rewritten.
constexpr const char* kMagic1 = "qmm-tune 1";
constexpr const char* kMagic2 = "qmm-tune 2";
constexpr size_t kMaxFileBytes = size_t{1} << 20;  // a tune file is a few KiB; more is not ours

std::string line_of(const Entry& e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %zu %.1f %.1f", e.chunk, e.default_us, e.chosen_us);
  return e.id() + " " + e.gemv + buf;
}

std::string line_of(const StepEntry& e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %.1f %.1f", e.default_us, e.chosen_us);
  return e.id() + " " + e.gemv + buf;
}

bool parse_class(const std::string& line, Entry* e) {
  std::istringstream f(line);
  std::string extra;
  return (f >> e->threads >> e->bucket >> e->gemm >> e->gemv >> e->chunk >> e->default_us >> e->chosen_us) && !(f >> extra) &&
         e->threads >= 1 && e->threads <= 4096 && e->bucket <= 80 && e->chunk >= 4096 && e->chunk <= (size_t{1} << 30) &&
         e->default_us >= 0 && e->chosen_us >= 0;
}

bool parse_step(const std::string& line, StepEntry* e) {
  std::istringstream f(line);
  std::string word, extra;
  return (f >> word >> e->threads >> e->model >> e->gemm >> e->gemv >> e->default_us >> e->chosen_us) && !(f >> extra) &&
         word == "step" && e->threads >= 1 && e->threads <= 4096 && e->model.size() == 16 &&
         e->model.find_first_not_of("0123456789abcdef") == std::string::npos && e->default_us >= 0 && e->chosen_us >= 0;
}

// One-sided Student t quantiles at 99 %, by degrees of freedom 1..30 (then 2.42).
double t_quantile_99(size_t df) {
  static constexpr double kT[] = {31.821, 6.965, 4.541, 3.747, 3.365, 3.143, 2.998, 2.896, 2.821, 2.764,
                                  2.718,  2.681, 2.650, 2.624, 2.602, 2.583, 2.567, 2.552, 2.539, 2.528,
                                  2.518,  2.508, 2.500, 2.492, 2.485, 2.479, 2.473, 2.467, 2.462, 2.457};
  if (df == 0) return INFINITY;
  return df <= std::size(kT) ? kT[df - 1] : 2.42;
}

}  // namespace

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

CacheFile read_cache(const std::string& path, const std::string& key, bool* ok) {
  CacheFile out;
  *ok = false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > kMaxFileBytes) return out;
  std::istringstream lines(text);
  std::string magic, keyline;
  if (!std::getline(lines, magic) || (magic != kMagic1 && magic != kMagic2) || !std::getline(lines, keyline) ||
      keyline != "key " + key) {
    return out;
  }
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    Entry e;
    StepEntry s;
    if (magic == kMagic2 && line.rfind("step ", 0) == 0 && parse_step(line, &s)) {
      out.steps[s.id()] = s;
    } else if (line.rfind("step ", 0) != 0 && parse_class(line, &e)) {
      out.classes[e.id()] = e;
    } else {
      return CacheFile{};  // one bad line: the whole file is suspect
    }
  }
  *ok = true;
  return out;
}

std::string cache_text(const CacheFile& c, const std::string& key) {
  std::string text = std::string(kMagic2) + "\nkey " + key + "\n";
  for (const auto& [id, e] : c.classes) text += line_of(e) + "\n";
  for (const auto& [id, e] : c.steps) text += line_of(e) + "\n";
  return text;
}

// Temporary file + rename: readers see the old file or the new one, never a part.
bool write_cache(const std::string& dir, const std::string& path, const std::string& text, std::string* why) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    // A missing parent (~/.cache itself): create it too, one level.
    const size_t slash = dir.find_last_of('/');
    if (slash == std::string::npos || slash == 0 || ::mkdir(dir.substr(0, slash).c_str(), 0755) != 0 ||
        ::mkdir(dir.c_str(), 0755) != 0) {
      *why = std::strerror(errno);
      return false;
    }
  }
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    *why = std::strerror(errno);
    return false;
  }
  ::fchmod(fd, 0644);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  const bool ok = done == text.size() && ::close(fd) == 0 && ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    *why = std::strerror(errno);
    ::unlink(tmp.c_str());
  }
  return ok;
}


void warn_once(const std::function<void(const std::string&)>& warn, const std::string& msg) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  if (warn) {
    warn(msg);
  } else {
    std::fprintf(stderr, "qmm: %s\n", msg.c_str());
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Candidate k's time as a ratio of the default's, paired: in each round, the median over the
// class's weights of log(t_k / t_0) (both runs of a weight in the same round: a run another
// process preempted moves one weight's value, not the median); each pair of rounds averaged
// (the two orders: an effect of the order cancels); over the pairs, the mean and its one-sided
// 99 % bound (Student t: a slow spell of the machine, which moves a whole round, is
// part of the pairs' spread). Fewer than two pairs: no bound (infinity).
void paired_ratio(const std::vector<std::vector<double>>& round_times, const std::vector<size_t>& members,
                  size_t stride, size_t k, double* ratio, double* bound) {
  std::vector<double> pairs;
  for (size_t r = 0; r + 1 < round_times.size(); r += 2) {
    double s = 0;
    for (size_t rr = r; rr < r + 2; ++rr) {
      std::vector<double> logs;
      for (size_t i : members) {
        const double tk = round_times[rr][i * stride + k], t0 = round_times[rr][i * stride];
        if (tk > 0 && t0 > 0) logs.push_back(std::log(tk / t0));
      }
      if (logs.empty()) return (void)(*ratio = 1, *bound = INFINITY);
      s += 0.5 * median(std::move(logs));
    }
    pairs.push_back(s);
  }
  if (pairs.empty()) return (void)(*ratio = 1, *bound = INFINITY);
  double mean = 0;
  for (double x : pairs) mean += x;
  mean /= static_cast<double>(pairs.size());
  double var = 0;
  for (double x : pairs) var += (x - mean) * (x - mean);
  const size_t df = pairs.size() - 1;
  const double se = df ? std::sqrt(var / static_cast<double>(df) / static_cast<double>(pairs.size())) : INFINITY;
  *ratio = std::exp(mean);
  *bound = df ? std::exp(mean + t_quantile_99(df) * se) : INFINITY;
}


std::string model_signature(std::span<PackedWeights* const> weights) {
  uint64_t h = 0xcbf29ce484222325u;  // FNV-1a
  auto mix = [&h](const std::string& s) {
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  };
  for (const PackedWeights* w : weights) mix(std::string(w->gemm().name) + " " + std::to_string(w->n()) + " " + std::to_string(w->k()) + ";");
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace qmm::tune_detail
