// Reading the Prometheus text format in the tests of qmm serve's /metrics: every sample line
// `name{labels} value` as a map from `name{labels}` to its value; a line that is neither a
// comment nor a sample fails the parse.
#pragma once
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

namespace qmm::serve::test {

// False (and `bad` = the line) when a line is malformed.
inline bool parse_metrics(const std::string& text, std::map<std::string, double>& out, std::string* bad = nullptr) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) continue;
    const size_t space = line.rfind(' ');
    char* end = nullptr;
    const std::string value = space == std::string::npos ? std::string() : line.substr(space + 1);
    const double v = std::strtod(value.c_str(), &end);
    const bool number = !value.empty() && end == value.c_str() + value.size();
    const std::string key = line.substr(0, space == std::string::npos ? 0 : space);
    if (!number || key.empty() || key.find(' ') != std::string::npos) {
      if (bad) *bad = line;
      return false;
    }
    out[key] = v;
  }
  return true;
}

inline std::map<std::string, double> metrics_of(const std::string& text) {
  std::map<std::string, double> m;
  parse_metrics(text, m);
  return m;
}

}  // namespace qmm::serve::test
