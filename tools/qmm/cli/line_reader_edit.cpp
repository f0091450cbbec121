// LineReader over libedit's readline interface (line editing and history on a terminal).
#include <editline/readline.h>
#include <langinfo.h>
#include <unistd.h>

#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "bounded_read.h"
#include "line_reader.h"

namespace qmm::cli {

namespace {

// libedit reads multibyte characters only in a UTF-8 LC_CTYPE: in the C locale (no
// setlocale call, or LANG unset) it drops every non-ASCII character of the line. The
// environment's locale is taken; where it is not UTF-8, C.UTF-8 (qmm's text is UTF-8).
void use_utf8_ctype() {
  const char* set = std::setlocale(LC_CTYPE, "");
  if (set && std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0) return;
  std::setlocale(LC_CTYPE, "C.UTF-8");
}

}  // namespace

LineReader::LineReader() : interactive_(isatty(STDIN_FILENO) != 0) {
  if (!interactive_) return;
  use_utf8_ctype();
  using_history();
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
