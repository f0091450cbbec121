// Reads the user's lines for `qmm chat`: with line editing and history (Debian's libedit)
// when standard input is a terminal and the build has libedit, else plain lines.
#pragma once
#include <optional>
#include <string>

namespace qmm::cli {

class LineReader {
 public:
  LineReader();
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  bool interactive() const { return interactive_; }  // standard input is a terminal
  // The next line without its newline (the prompt is shown on a terminal only); nullopt at
  // the end of the input or when a read was interrupted (Ctrl-C).
  std::optional<std::string> read(const char* prompt);

 private:
  bool interactive_;
};

}  // namespace qmm::cli
