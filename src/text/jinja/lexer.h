// The Jinja lexer: template text -> one token stream (text, {{ … }}, {% … %} and the
// expression tokens inside them), with Jinja's whitespace rules applied here: `-` strips
// whitespace beside a tag, `+` keeps it, trim_blocks drops the newline after a block or comment
// tag, lstrip_blocks drops the spaces before one on its line, and one trailing newline of the
// template is dropped (keep_trailing_newline = False). Newlines are normalized to "\n".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qmm::llm::jinja {

struct Token {
  enum class Type { text, var_begin, var_end, block_begin, block_end, name, string, integer, number, op, eof };
  Type type;
  std::string text;  // text, name, operator, or the decoded string literal
  int64_t ival = 0;
  double fval = 0;
  int line = 1;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

std::vector<Token> lex(std::string_view source, const LexOptions& opt);

// "template line N: message" as a qmm::Error.
[[noreturn]] void template_error(int line, const std::string& message);

}  // namespace qmm::llm::jinja
