// The Jinja parser: tokens -> statements, with Jinja's operator precedence (loosest first):
// `x if c else y`, or, and, not, comparisons / in / not in, + -, ~, * / // %, **, unary - +,
// then postfix (.attr, [index], [a:b:c], call) and filters / tests (`|f`, `is t`).
#pragma once
#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/lexer.h"

namespace qmm::llm::jinja {

Body parse(const std::vector<Token>& tokens);

}  // namespace qmm::llm::jinja
