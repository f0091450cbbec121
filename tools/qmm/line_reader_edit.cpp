// LineReader over libedit's readline interface (line editing and history on a terminal).
#include <editline/readline.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "bounded_read.h"
#include "line_reader.h"

namespace qmm::cli {

LineReader::LineReader() : interactive_(isatty(STDIN_FILENO) != 0) {
  if (interactive_) using_history();
}

LineReader::~LineReader() {
  if (interactive_) clear_history();
}

std::optional<std::string> LineReader::read(const char* prompt) {
  if (!interactive_) {
      return read_line_bounded(std::cin, kMaxPromptBytes, "a line of standard input");
  }
  char* line = readline(prompt);
  if (line == nullptr) return std::nullopt;
  std::string s(line);
  std::free(line);
  if (!s.empty()) add_history(s.c_str());
  return s;
}

}  // namespace qmm::cli
