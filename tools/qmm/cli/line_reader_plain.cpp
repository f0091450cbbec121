// LineReader without libedit (a build without it, e.g. the Arm cross build): plain lines.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "line_reader.h"

namespace qmm::cli {

LineReader::LineReader() : interactive_(isatty(STDIN_FILENO) != 0) {}
LineReader::~LineReader() = default;

std::optional<std::string> LineReader::read(const char* prompt) {
  if (interactive_) {
    std::fputs(prompt, stdout);
    std::fflush(stdout);
  }
  std::string line;
  if (!std::getline(std::cin, line)) return std::nullopt;
  return line;
}

}  // namespace qmm::cli
