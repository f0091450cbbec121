// The syntax tree of a parsed template: expressions and statements, each with its line.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja/value.h"

namespace qmm::llm::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    literal,  // value
    name,     // name
    attr,     // args[0].name
    item,     // args[0][args[1]]
    slice,    // args[0][args[1]:args[2]:args[3]] (null parts absent)
    call,     // args[0](args[1..], kwargs)
    filter,   // args[0] | name(args[1..], kwargs)
    test,     // args[0] is [not] name(args[1..])
    unary,    // name ("not", "-", "+") args[0]
    binary,   // args[0] name args[1]: arithmetic, ~, and, or (code: the operator's first char)
    compare,  // args[0] ops[0] args[1] ops[1] args[2] …: ==, !=, <, <=, >, >=, in, not in, chained
    cond,     // args[0] if args[1] else args[2] (args[2] null: undefined)
    list,     // [args...]
    tuple,    // (args...)
    dict,     // {args[0]: args[1], ...}
  };
  Kind kind;
  int line = 0;
  int depth = 1;  // of the tree below this node, this node included (the parser bounds it)
  Value value;
  std::string name;
  bool negate = false;
  char code = 0;                 // binary: 'a' and, 'o' or, '~' concat, else the arithmetic operator's char
  std::vector<std::string> ops;  // compare
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind {
    text,       // text
    output,     // {{ expr }}
    if_,        // branches (a null condition is the else branch)
    for_,       // for target in expr [if cond]: body, else_body
    set,        // set target = expr
    set_block,  // set target: body rendered
    macro,      // macro name(params): body
    break_,
    continue_,
    block,      // body as is ({% generation %})
    filter,     // body rendered, then through expr: filters applied to a placeholder literal ({% filter %})
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr target;  // a name, a tuple of names, or ns.attr
  ExprPtr cond;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body, else_body;
  std::vector<std::pair<std::string, ExprPtr>> params;  // macro parameters, default or null
};

}  // namespace qmm::llm::jinja
