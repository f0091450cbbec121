// Temporary directories of a test program, removed with their contents when the program ends:
// tests hand them around by name, and a test that fails midway must not leave its files behind
// (a pack-cache test's copies of a model add up over many runs).
#pragma once
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace qmm::test {

// mkdtemp("<temp dir>/<prefix>_XXXXXX"), removed at exit by the process that made it; "" when
// it cannot be made.
inline std::string temp_dir(const std::string& prefix) {
  struct Made {
    pid_t owner = ::getpid();
    std::vector<std::string> dirs;
    ~Made() {
      if (::getpid() != owner) return;  // a forked child's exit leaves the parent's directories
      for (const std::string& d : dirs) {
        std::error_code ec;
        std::filesystem::remove_all(d, ec);
      }
    }
  };
  static Made made;
  std::error_code ec;
  std::string t = (std::filesystem::temp_directory_path(ec) / (prefix + "_XXXXXX")).string();
  if (ec || ::mkdtemp(t.data()) == nullptr) return "";
  made.dirs.push_back(t);
  return t;
}

// The text of a file a test wrote ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace qmm::test
