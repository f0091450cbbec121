#include "jinja_oracle.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace qmm::test {

using llm::jinja::Value;

std::optional<std::vector<OracleResult>> run_oracle(const std::vector<OracleCase>& cases, std::time_t now,
                                                    std::string& why) {
  const std::string python = QMM_PYTHON3;
  if (python.empty()) {
    why = "python3 not found";
    return std::nullopt;
  }
  std::vector<Value> list;
  for (const auto& c : cases) list.push_back(Value::make_dict({{"template", Value(c.source)}, {"vars", c.vars}}));
  Value spec = Value::make_dict({{"now", Value(static_cast<int64_t>(now))}, {"cases", Value::list(std::move(list))}});

  char path[] = "/tmp/qmm_jinja_oracle_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    why = "cannot create a temporary file";
    return std::nullopt;
  }
  close(fd);
  std::ofstream(path, std::ios::binary) << spec.to_json();
  std::string cmd = "'" + python + "' '" QMM_JINJA_ORACLE "' '" + path + "'";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  if (p) {
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  }
  int status = p ? pclose(p) : -1;
  std::remove(path);
  if (status != 0) {
    why = WIFEXITED(status) && WEXITSTATUS(status) == 3 ? "python3-jinja2 is not installed (apt-get install python3-jinja2)"
                                                          : "the jinja2 oracle failed to run: " + cmd;
    return std::nullopt;
  }
  std::vector<OracleResult> results;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    if (nl == std::string::npos) break;
    std::string head = out.substr(pos, nl - pos);
    size_t sp = head.find(' ');
    size_t len = std::stoul(head.substr(sp + 1));
    results.push_back(OracleResult{head.substr(0, sp) == "OK", out.substr(nl + 1, len)});
    pos = nl + 1 + len;
  }
  if (results.size() != cases.size()) {
    why = "the jinja2 oracle returned " + std::to_string(results.size()) + " results for " +
          std::to_string(cases.size()) + " cases";
    return std::nullopt;
  }
  return results;
}

}  // namespace qmm::test
