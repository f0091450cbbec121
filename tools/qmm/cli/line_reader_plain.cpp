// LineReader without libedit (a build without it, e.g. the Arm cross build): plain lines.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "bounded_read.h"
#include "line_reader.h"

namespace qmm::cli {

LineReader::LineReader() : interactive_(isatty(STDIN_FILENO) != 0) {}
LineReader::~LineReader() = default;

std::optional<std::string> LineReader::read(const char* prompt) {
  if (interactive_) {
    std::fputs(prompt, stdout);
    std::fflush(stdout);
  }
  return read_line_bounded(std::cin, kMaxPromptBytes, "a line of standard input");
}

}  // namespace qmm::cli
