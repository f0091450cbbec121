// Reads of what the user names (a prompt file, standard input, a chat template, the lines of
// `qmm chat`) stop at a stated limit with a one-line error, so that /dev/zero or one endless
// line cannot exhaust memory.
#pragma once
#include <cstddef>
#include <istream>
#include <optional>
#include <string>

#include "core/error.h"

namespace qmm::cli {

// A prompt (-p -, -f FILE) or one line of `qmm chat`: far more than any context holds.
constexpr size_t kMaxPromptBytes = size_t{16} << 20;

inline std::string limit_text(size_t limit) {
  return limit % (1 << 20) == 0 ? std::to_string(limit >> 20) + " MiB" : std::to_string(limit) + " bytes";
}

// All of `in`; a qmm::Error "WHAT is larger than N MiB" past `limit` bytes.
inline std::string read_all_bounded(std::istream& in, size_t limit, const std::string& what) {
  std::string text;
  char buf[65536];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > limit) fail(Status::invalid_argument, what + " is larger than " + limit_text(limit));
  }
  if (in.bad()) fail(Status::io, "cannot read " + what);
  return text;
}

// The next line of `in` without its newline, nullopt at the end of the input; a qmm::Error
// "WHAT is longer than N MiB" past `limit` bytes.
inline std::optional<std::string> read_line_bounded(std::istream& in, size_t limit, const std::string& what) {
  std::string line;
  char buf[65536];
  for (bool any = false;; any = true) {
    in.getline(buf, sizeof buf);
    const auto n = static_cast<size_t>(in.gcount());  // with the newline, if one was taken
    if (in.bad()) fail(Status::io, "cannot read " + what);
    const bool full = in.fail() && !in.eof() && n == sizeof buf - 1;  // the line goes on
    if (!full && n == 0 && in.fail()) return any ? std::optional<std::string>(line) : std::nullopt;  // the end
    line.append(buf, full || in.eof() ? n : n - 1);
    if (line.size() > limit) fail(Status::invalid_argument, what + " is longer than " + limit_text(limit));
    if (!full) return line;
    in.clear();
  }
}

}  // namespace qmm::cli
