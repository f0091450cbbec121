// Runs tests/llm/jinja_oracle.py (python3-jinja2, set up as transformers does) on a batch of
// templates, in one process, for byte comparisons with qmm's interpreter.
#pragma once
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "text/jinja/value.h"

namespace qmm::test {

struct OracleCase {
  std::string source;
  llm::jinja::Value vars;  // a dict
};

struct OracleResult {
  bool ok = false;
  std::string text;  // the rendering, or jinja2's error
};

// The results in order, or nullopt with `why` set when python3 or jinja2 is missing.
std::optional<std::vector<OracleResult>> run_oracle(const std::vector<OracleCase>& cases, std::time_t now,
                                                    std::string& why);

}  // namespace qmm::test
