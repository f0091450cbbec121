#include "text/jinja/parser.h"

#include <algorithm>
#include <initializer_list>
#include <string>

#include "text/jinja/builtins.h"

namespace qmm::llm::jinja {
namespace {

constexpr int kMaxDepth = 200;  // nesting of blocks and parentheses
// Levels of one expression's tree: chains such as a ~ b ~ c, x|f|g, a.b.c or a if b else c if …
// nest without parentheses. Bounded as each node is made, so that evaluating or destroying a
// tree never recurses deeper than this.
constexpr int kMaxExprDepth = 200;

using T = Token::Type;

// Sets e's depth from its children's; more than kMaxExprDepth is an error.
void bound(Expr& e) {
  int d = 0;
  for (const auto& a : e.args)
    if (a) d = std::max(d, a->depth);
  for (const auto& [k, a] : e.kwargs) d = std::max(d, a->depth);
  e.depth = d + 1;
  if (e.depth > kMaxExprDepth)
    template_error(e.line, "the expression is nested too deeply (more than " + std::to_string(kMaxExprDepth) +
                               " levels of operators, filters, attributes or subscripts)");
}

ExprPtr make(Expr::Kind k, int line, std::string name = {}) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->line = line;
  e->name = std::move(name);
  return e;
}

ExprPtr make(Expr::Kind k, int line, std::string name, ExprPtr a, ExprPtr b = nullptr) {
  auto e = make(k, line, std::move(name));
  e->args.push_back(std::move(a));
  if (b) e->args.push_back(std::move(b));
  bound(*e);
  return e;
}

std::string describe(const Token& t) {
  switch (t.type) {
    case T::eof: return "end of template";
    case T::var_end: return "end of print statement";
    case T::block_end: return "end of statement block";
    case T::string: return "string";
    case T::text: return "text";
    default: return "'" + t.text + "'";
  }
}

class Parser {
 public:
  explicit Parser(const std::vector<Token>& t) : t_(t) {}

  Body parse_template() {
    return parse_body({});
  }

 private:
  const Token& cur() const { return t_[pos_]; }
  const Token& peek(size_t n = 1) const { return t_[std::min(pos_ + n, t_.size() - 1)]; }
  int line() const { return cur().line; }
  [[noreturn]] void error(const std::string& msg) const { template_error(line(), msg); }
  bool is_op(const char* op) const { return cur().type == T::op && cur().text == op; }
  bool is_name(const char* n) const { return cur().type == T::name && cur().text == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    pos_++;
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    pos_++;
    return true;
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) error(std::string("expected '") + op + "', got " + describe(cur()));
  }
  void expect(T type, const char* what) {
    if (cur().type != type) error(std::string("expected ") + what + ", got " + describe(cur()));
    pos_++;
  }
  std::string expect_name() {
    if (cur().type != T::name) error("expected a name, got " + describe(cur()));
    return t_[pos_++].text;
  }

  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.error("nested too deeply");
    }
    ~DepthGuard() { p_.depth_--; }
    Parser& p_;
  };

  // Statements until a block tag whose name is one of `ends` (left unconsumed, after "{%").
  Body parse_body(std::initializer_list<const char*> ends) {
    DepthGuard guard(*this);
    Body body;
    while (true) {
      const Token& tok = cur();
      if (tok.type == T::eof) {
        if (ends.size() == 0) return body;
        std::string names;
        for (const char* e : ends) names += std::string(names.empty() ? "" : " or ") + "'" + e + "'";
        error("unexpected end of template: the block is never closed, expected " + names);
      }
      if (tok.type == T::text) {
        auto n = node(Node::Kind::text);
        n->text = tok.text;
        body.push_back(std::move(n));
        pos_++;
      } else if (tok.type == T::var_begin) {
        auto n = node(Node::Kind::output);
        pos_++;
        n->expr = parse_tuple(true);
        expect(T::var_end, "'}}'");
        body.push_back(std::move(n));
      } else if (tok.type == T::block_begin) {
        const Token& name = peek();
        if (name.type == T::name)
          for (const char* e : ends)
            if (name.text == e) {
              pos_++;
              return body;
            }
        pos_++;
        body.push_back(parse_statement());
      } else {
        error("unexpected " + describe(tok));
      }
    }
  }

  NodePtr node(Node::Kind k) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->line = line();
    return n;
  }

  // After "{%" of an end tag that parse_body matched: its name and "%}".
  void end_tag(const char* name) {
    pos_++;
    expect(T::block_end, (std::string("'%}' after '") + name + "'").c_str());
  }

  NodePtr parse_statement() {
    if (cur().type != T::name) error("expected a tag name, got " + describe(cur()));
    std::string tag = cur().text;
    if (tag == "if") return parse_if();
    if (tag == "for") return parse_for();
    if (tag == "set") return parse_set();
    if (tag == "macro") return parse_macro();
    if (tag == "break" || tag == "continue") {
      auto n = node(tag == "break" ? Node::Kind::break_ : Node::Kind::continue_);
      pos_++;
      expect(T::block_end, "'%}'");
      return n;
    }
    if (tag == "generation") {
      auto n = node(Node::Kind::block);
      pos_++;
      expect(T::block_end, "'%}'");
      n->body = parse_body({"endgeneration"});
      end_tag("endgeneration");
      return n;
    }
    if (tag == "filter") return parse_filter_block();
    static const char* const ends[] = {"endif", "elif", "else", "endfor", "endset", "endmacro", "endgeneration", "endfilter"};
    for (const char* e : ends)
      if (tag == e) error("unexpected '" + tag + "': no open block it could end");
    static const char* const unsupported[] = {"block", "extends", "include", "import", "from", "call", "with",
                                              "do", "autoescape", "trans"};
    for (const char* u : unsupported)
      if (tag == u) error("the tag '" + tag + "' is not supported");
    error("unknown tag '" + tag + "'");
  }

  // {% filter name(args) | name2 %}body{% endfilter %}: the chain applies to a placeholder
  // (an undefined literal) that rendering replaces with the body's text.
  NodePtr parse_filter_block() {
    auto n = node(Node::Kind::filter);
    pos_++;
    int ln = line();
    ExprPtr chain = make(Expr::Kind::literal, ln);
    do {
      ln = line();
      chain = make(Expr::Kind::filter, ln, dotted_name(), std::move(chain));
      if (is_op("(")) parse_call_args(*chain);
    } while (skip_op("|"));
    n->expr = std::move(chain);
    expect(T::block_end, "'%}'");
    n->body = parse_body({"endfilter"});
    end_tag("endfilter");
    return n;
  }

  NodePtr parse_if() {
    auto n = node(Node::Kind::if_);
    pos_++;
    while (true) {
      ExprPtr test = parse_tuple(false);
      expect(T::block_end, "'%}'");
      Body body = parse_body({"elif", "else", "endif"});
      n->branches.emplace_back(std::move(test), std::move(body));
      std::string which = expect_name();
      if (which == "elif") continue;
      if (which == "else") {
        expect(T::block_end, "'%}'");
        n->branches.emplace_back(nullptr, parse_body({"endif"}));
        end_tag("endif");
      } else {
        expect(T::block_end, "'%}'");
      }
      return n;
    }
  }

  NodePtr parse_for() {
    auto n = node(Node::Kind::for_);
    pos_++;
    n->target = parse_assign_target(false);
    if (!skip_name("in")) error("expected 'in' in the for loop, got " + describe(cur()));
    n->expr = parse_tuple(false);
    if (skip_name("if")) n->cond = parse_expression(true);
    if (is_name("recursive")) error("recursive for loops are not supported");
    expect(T::block_end, "'%}'");
    n->body = parse_body({"endfor", "else"});
    if (expect_name() == "else") {
      expect(T::block_end, "'%}'");
      n->else_body = parse_body({"endfor"});
      end_tag("endfor");
    } else {
      expect(T::block_end, "'%}'");
    }
    return n;
  }

  NodePtr parse_set() {
    auto n = node(Node::Kind::set);
    pos_++;
    n->target = parse_assign_target(true);
    if (skip_op("=")) {
      n->expr = parse_tuple(true);
      expect(T::block_end, "'%}'");
      return n;
    }
    if (n->target->kind != Expr::Kind::name) error("a block set needs one name");
    if (is_op("|")) error("filters on a block set are not supported");
    expect(T::block_end, "'%}' or '='");
    n->kind = Node::Kind::set_block;
    n->body = parse_body({"endset"});
    end_tag("endset");
    return n;
  }

  NodePtr parse_macro() {
    auto n = node(Node::Kind::macro);
    pos_++;
    n->text = expect_name();
    expect_op("(");
    while (!skip_op(")")) {
      if (!n->params.empty()) expect_op(",");
      if (skip_op(")")) break;
      std::string p = expect_name();
      ExprPtr def;
      if (skip_op("=")) def = parse_expression(true);
      else if (!n->params.empty() && n->params.back().second)
        error("a macro parameter without a default follows one with a default");
      n->params.emplace_back(std::move(p), std::move(def));
    }
    expect(T::block_end, "'%}'");
    n->body = parse_body({"endmacro"});
    end_tag("endmacro");
    return n;
  }

  // A name, `ns.attr` (set only), or names separated by commas (optionally in parentheses).
  ExprPtr parse_assign_target(bool allow_attr) {
    int ln = line();
    bool paren = skip_op("(");
    std::vector<ExprPtr> names;
    do {
      if (paren && is_op(")")) break;
      auto e = make(Expr::Kind::name, ln, expect_name());
      if (allow_attr && !paren && skip_op(".")) e = make(Expr::Kind::attr, ln, expect_name(), std::move(e));
      names.push_back(std::move(e));
    } while (skip_op(","));
    if (paren) expect_op(")");
    if (names.size() == 1 && !paren) return std::move(names[0]);
    auto t = make(Expr::Kind::tuple, ln);
    t->args = std::move(names);
    return t;
  }

  bool at_expression_end() const {
    return cur().type == T::var_end || cur().type == T::block_end || cur().type == T::eof || is_op(")") ||
           is_op("]") || is_op("}") || is_op("=");
  }

  // expr, or expr, expr, … (a tuple)
  ExprPtr parse_tuple(bool condexpr) {
    int ln = line();
    ExprPtr first = parse_expression(condexpr);
    if (!is_op(",")) return first;
    auto t = make(Expr::Kind::tuple, ln);
    t->args.push_back(std::move(first));
    while (skip_op(",")) {
      if (at_expression_end() || is_name("if") || is_name("recursive")) break;
      t->args.push_back(parse_expression(condexpr));
    }
    bound(*t);
    return t;
  }

  ExprPtr parse_expression(bool condexpr) {
    DepthGuard guard(*this);
    return condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    int ln = line();
    ExprPtr e = parse_or();
    while (skip_name("if")) {
      auto c = make(Expr::Kind::cond, ln);
      c->args.push_back(std::move(e));
      c->args.push_back(parse_or());
      c->args.push_back(skip_name("else") ? parse_expression(true) : nullptr);
      bound(*c);
      e = std::move(c);
    }
    return e;
  }

  // One left-associative level: operands from `next`, joined by any of `ops` (operators, or
  // the names "and" / "or").
  using Level = ExprPtr (Parser::*)();
  ExprPtr parse_level(std::initializer_list<const char*> ops, Level next) {
    ExprPtr e = (this->*next)();
    while (true) {
      const char* op = nullptr;
      for (const char* o : ops)
        if ((cur().type == T::op || cur().type == T::name) && cur().text == o) op = o;
      if (!op) return e;
      int ln = line();
      pos_++;
      e = make(Expr::Kind::binary, ln, op, std::move(e), (this->*next)());
      e->code = op[0];
    }
  }
  ExprPtr parse_or() { return parse_level({"or"}, &Parser::parse_and); }
  ExprPtr parse_and() { return parse_level({"and"}, &Parser::parse_not); }
  ExprPtr parse_math1() { return parse_level({"+", "-"}, &Parser::parse_concat); }
  ExprPtr parse_concat() { return parse_level({"~"}, &Parser::parse_math2); }
  ExprPtr parse_math2() { return parse_level({"*", "/", "//", "%"}, &Parser::parse_pow); }
  ExprPtr parse_pow() { return parse_level({"**"}, &Parser::parse_power_operand); }
  ExprPtr parse_power_operand() { return parse_unary(true); }

  ExprPtr parse_not() {
    if (is_name("not")) {
      int ln = line();
      pos_++;
      DepthGuard guard(*this);
      return make(Expr::Kind::unary, ln, "not", parse_not());
    }
    return parse_compare();
  }

  // a == b, a in b, a < b < c (chained as in Python: a < b and b < c)
  ExprPtr parse_compare() {
    ExprPtr first = parse_math1();
    ExprPtr e;
    while (true) {
      std::string op;
      if (cur().type == T::op && (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                                  cur().text == ">" || cur().text == "<=" || cur().text == ">=")) {
        op = cur().text;
        pos_++;
      } else if (is_name("in")) {
        op = "in";
        pos_++;
      } else if (is_name("not") && peek().type == T::name && peek().text == "in") {
        op = "not in";
        pos_ += 2;
      } else {
        return e ? std::move(e) : std::move(first);
      }
      if (!e) {
        e = make(Expr::Kind::compare, first->line);
        e->args.push_back(std::move(first));
      }
      e->ops.push_back(op);
      e->args.push_back(parse_math1());
      bound(*e);
    }
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    int ln = line();
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      std::string op = t_[pos_++].text;
      e = make(Expr::Kind::unary, ln, op, parse_unary(false));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    return with_filter ? parse_filter_expr(std::move(e)) : std::move(e);
  }

  ExprPtr parse_primary() {
    const Token& tok = cur();
    int ln = tok.line;
    auto lit = [&](Value v) {
      auto e = make(Expr::Kind::literal, ln);
      e->value = std::move(v);
      return e;
    };
    switch (tok.type) {
      case T::name: {
        pos_++;
        const std::string& n = tok.text;
        if (n == "true" || n == "True") return lit(Value(true));
        if (n == "false" || n == "False") return lit(Value(false));
        if (n == "none" || n == "None") return lit(Value::none());
        return make(Expr::Kind::name, ln, n);
      }
      case T::string: {
        std::string s;
        while (cur().type == T::string) s += t_[pos_++].text;
        return lit(Value(std::move(s)));
      }
      case T::integer: pos_++; return lit(Value(tok.ival));
      case T::number: pos_++; return lit(Value(tok.fval));
      case T::op:
        if (tok.text == "(") {
          pos_++;
          if (skip_op(")")) return make(Expr::Kind::tuple, ln);
          ExprPtr e = parse_expression(true);
          if (is_op(",")) {
            auto t = make(Expr::Kind::tuple, ln);
            t->args.push_back(std::move(e));
            while (skip_op(",") && !is_op(")")) t->args.push_back(parse_expression(true));
            bound(*t);
            e = std::move(t);
          }
          expect_op(")");
          return e;
        }
        if (tok.text == "[") {
          pos_++;
          auto e = make(Expr::Kind::list, ln);
          while (!skip_op("]")) {
            if (!e->args.empty()) expect_op(",");
            if (skip_op("]")) break;
            e->args.push_back(parse_expression(true));
          }
          bound(*e);
          return e;
        }
        if (tok.text == "{") {
          pos_++;
          auto e = make(Expr::Kind::dict, ln);
          while (!skip_op("}")) {
            if (!e->args.empty()) expect_op(",");
            if (skip_op("}")) break;
            e->args.push_back(parse_expression(true));
            expect_op(":");
            e->args.push_back(parse_expression(true));
          }
          bound(*e);
          return e;
        }
        break;
      default: break;
    }
    error("unexpected " + describe(tok));
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      int ln = line();
      if (skip_op(".")) {
        if (cur().type == T::integer) {
          auto idx = make(Expr::Kind::literal, ln);
          idx->value = Value(t_[pos_++].ival);
          e = make(Expr::Kind::item, ln, "", std::move(e), std::move(idx));
        } else {
          e = make(Expr::Kind::attr, ln, expect_name(), std::move(e));
        }
      } else if (skip_op("[")) {
        e = parse_subscript(std::move(e), ln);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, int ln) {
    ExprPtr parts[3];
    int part = 0;
    bool is_slice = false;
    while (!is_op("]")) {
      if (skip_op(":")) {
        is_slice = true;
        if (++part > 2) error("a slice has at most 3 parts");
        continue;
      }
      if (parts[part]) error("expected ']' or ':', got " + describe(cur()));
      parts[part] = parse_expression(true);
      if (is_op(",")) error("tuple subscripts are not supported");
    }
    pos_++;
    if (!is_slice) {
      if (!parts[0]) error("empty subscript");
      return make(Expr::Kind::item, ln, "", std::move(obj), std::move(parts[0]));
    }
    auto e = make(Expr::Kind::slice, ln);
    e->args.push_back(std::move(obj));
    for (auto& p : parts) e->args.push_back(std::move(p));
    bound(*e);
    return e;
  }

  void parse_call_args(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!skip_op(")")) {
      if (!first) expect_op(",");
      first = false;
      if (skip_op(")")) break;
      if (is_op("*") || is_op("**")) error("*args and **kwargs are not supported");
      if (cur().type == T::name && peek().type == T::op && peek().text == "=") {
        std::string k = t_[pos_].text;
        pos_ += 2;
        e.kwargs.emplace_back(std::move(k), parse_expression(true));
      } else {
        if (!e.kwargs.empty()) error("a positional argument follows a keyword argument");
        e.args.push_back(parse_expression(true));
      }
    }
    bound(e);
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto e = make(Expr::Kind::call, line());
    e->args.push_back(std::move(callee));
    parse_call_args(*e);
    return e;
  }

  std::string dotted_name() {
    std::string n = expect_name();
    while (is_op(".") && peek().type == T::name) {
      pos_++;
      n += '.';
      n += expect_name();
    }
    return n;
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    while (true) {
      int ln = line();
      if (skip_op("|")) {
        std::string name = dotted_name();  // (a name no filter has: check_names)
        auto f = make(Expr::Kind::filter, ln, name, std::move(e));
        if (is_op("(")) parse_call_args(*f);
        e = std::move(f);
      } else if (skip_name("is")) {
        bool negate = skip_name("not");
        std::string name = dotted_name();  // (a name no test has: check_names)
        auto t = make(Expr::Kind::test, ln, name, std::move(e));
        t->negate = negate;
        const Token& c = cur();
        if (is_op("(")) {
          parse_call_args(*t);
        } else if ((c.type == T::name || c.type == T::string || c.type == T::integer || c.type == T::number ||
                    is_op("[") || is_op("{")) &&
                   !is_name("else") && !is_name("or") && !is_name("and")) {
          if (is_name("is")) error("tests cannot be chained with 'is'");
          t->args.push_back(parse_postfix(parse_primary()));
          bound(*t);
        }
        e = std::move(t);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  const std::vector<Token>& t_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// Filters and tests no template can have are errors before rendering, as jinja2's compiler
// makes them, except inside an if statement or a conditional expression (jinja2's "soft"
// frames: there they fail only when evaluated, so a branch that never runs may name a filter
// jinja2 lacks, like DeepSeek's from_json). A for loop, macro, block set or filter block
// inside them starts a frame of its own, which is not soft.
void check_names(const Expr& e, bool soft) {
  soft = soft || e.kind == Expr::Kind::cond;
  if (!soft && e.kind == Expr::Kind::filter && !has_filter(e.name)) template_error(e.line, "no filter named '" + e.name + "'");
  if (!soft && e.kind == Expr::Kind::test && !has_test(e.name)) template_error(e.line, "no test named '" + e.name + "'");
  for (const ExprPtr& a : e.args)
    if (a) check_names(*a, soft);
  for (const auto& [name, a] : e.kwargs)
    if (a) check_names(*a, soft);
}

void check_names(const Body& body, bool soft) {
  for (const NodePtr& n : body) {
    const bool inner = n->kind == Node::Kind::if_ ? true : soft;
    const bool own_frame = n->kind == Node::Kind::for_ || n->kind == Node::Kind::macro ||
                           n->kind == Node::Kind::set_block || n->kind == Node::Kind::filter;
    for (const Expr* e : {n->expr.get(), n->target.get(), n->cond.get()})
      if (e) check_names(*e, n->kind == Node::Kind::filter ? false : soft);
    for (const auto& [test, branch] : n->branches) {
      if (test) check_names(*test, inner);
      check_names(branch, inner);
    }
    for (const auto& [name, def] : n->params)
      if (def) check_names(*def, false);
    check_names(n->body, own_frame ? false : soft);
    check_names(n->else_body, own_frame ? false : soft);
  }
}

}  // namespace

Body parse(const std::vector<Token>& tokens) {
  Body body = Parser(tokens).parse_template();
  check_names(body, false);
  return body;
}

}  // namespace qmm::llm::jinja
