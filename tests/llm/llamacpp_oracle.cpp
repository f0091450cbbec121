#include "llamacpp_oracle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace qmm::test {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string llamacpp_dir() {
  if (const char* d = std::getenv("QMM_LLAMACPP_DIR"); d && *d) return d;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.cache/qmm-llamacpp";
}

std::string llamacpp_missing() {
  if (std::system("node --version > /dev/null 2>&1") != 0) return "node is not installed (apt-get install nodejs npm)";
  const std::string dir = llamacpp_dir();
  if (!std::filesystem::exists(dir + "/node_modules/node-llama-cpp")) {
    return "node-llama-cpp is not installed in " + dir +
           " (scripts/llamacpp_setup.sh installs it; the npm registry could not be reached)";
  }
  return "";
}

bool run_llamacpp(const std::string& request_json, const std::string& answers, std::string& why) {
  // A copy per process beside node_modules (where node resolves the package from), so that tests
  // running at once do not overwrite each other's.
  const std::string script = llamacpp_dir() + "/batch-" + std::to_string(::getpid()) + ".mjs";
  std::filesystem::copy_file(QMM_LLAMACPP_SCRIPT, script, std::filesystem::copy_options::overwrite_existing);
  const std::string cmd = "node " + script + " " + request_json + " > " + answers;
  const bool ok = std::system(cmd.c_str()) == 0;
  std::filesystem::remove(script);
  if (!ok) why = "node failed: " + cmd;
  return ok;
}

std::vector<int32_t> read_ids(std::istringstream& in) {
  std::vector<int32_t> v;
  for (int32_t id; in >> id;) v.push_back(id);
  return v;
}

OracleAnswers read_answers(std::istream& in) {
  OracleAnswers o;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    char kind = 0;
    size_t m = 0, i = 0;
    ls >> kind >> m;
    if (kind == 'E') {
      std::getline(ls, o.errors[m]);
      continue;
    }
    ls >> i;
    if (kind == 'T') o.strings[{m, i}] = read_ids(ls);
    if (kind == 'P') o.prompts[{m, i}] = read_ids(ls);
    if (kind == 'G') o.greedy[{m, i}] = read_ids(ls);
    if (kind == 'L') {
      size_t step = 0;
      ls >> step;
      auto& v = o.top[{m, i, step}];
      for (std::string e; ls >> e;) {
        const size_t colon = e.find(':');
        v.emplace_back(std::stoi(e.substr(0, colon)), std::stod(e.substr(colon + 1)));
      }
    }
  }
  return o;
}

std::vector<double> softmax(const float* logits, size_t n) {
  const float mx = *std::max_element(logits, logits + n);
  std::vector<double> p(n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += p[i] = std::exp(static_cast<double>(logits[i] - mx));
  for (double& e : p) e /= sum;
  return p;
}

StepCheck check_step(const std::vector<double>& probs, const std::vector<std::pair<int32_t, double>>& top, int32_t next,
                     int32_t want, size_t step, double tie_below, double& worst) {
  for (const auto& [id, pr] : top) worst = std::max(worst, std::abs(probs[static_cast<size_t>(id)] - pr));
  StepCheck c;
  if (next == want) return c;
  c.differs = true;
  c.where = "step " + std::to_string(step) + ", token: llama.cpp / qmm probability";
  double theirs_of_ours = 0;
  for (const auto& [id, pr] : top) {
    c.where += "  " + std::to_string(id) + ": " + std::to_string(pr) + " / " + std::to_string(probs[static_cast<size_t>(id)]);
    if (id == next) theirs_of_ours = pr;
  }
  c.where += "  qmm's " + std::to_string(next) + ": " + std::to_string(probs[static_cast<size_t>(next)]);
  c.tie = !top.empty() && top[0].second - theirs_of_ours < tie_below;
  return c;
}

}  // namespace qmm::test
