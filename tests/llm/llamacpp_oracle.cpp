#include "llamacpp_oracle.h"

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

}  // namespace qmm::test
