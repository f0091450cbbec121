// The tree-walking evaluator behind jinja::Template (see template.h).
#include <cmath>

#include "core/error.h"
#include "text/jinja/ast.h"
#include "text/jinja/builtins.h"
#include "text/jinja/lexer.h"
#include "text/jinja/parser.h"
#include "text/jinja/template.h"

namespace qmm::llm::jinja {
namespace {

constexpr int kMaxCallDepth = 64;          // nested macro calls
// Statements and expressions being evaluated, one inside the other, macro calls included: the
// parser bounds one template's nesting, but a macro may call itself from deep inside its body.
constexpr int kMaxNesting = 1000;

// Variables of one frame: the template, one loop iteration, or one macro call. Lookups go
// outwards; `set` writes to the innermost frame (so a set inside a loop body ends with the
// iteration, as in Jinja).
struct Scope {
  Scope* parent = nullptr;
  std::vector<std::pair<std::string, Value>> vars;

  const Value* find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent)
      for (const auto& [k, v] : s->vars)
        if (k == name) return &v;
    return nullptr;
  }
  void set(const std::string& name, Value v) {
    for (auto& [k, old] : vars)
      if (k == name) {
        old = std::move(v);
        return;
      }
    vars.emplace_back(name, std::move(v));
  }
};

enum class Flow { normal, break_, continue_ };

bool is_int_value(const Value& v) { return v.is_int() || v.is_bool(); }

[[noreturn]] void type_error(const std::string& op, const Value& a, const Value& b) {
  throw Failure("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

Value repeat(const Value& seq, int64_t n) {
  if (n <= 0) return seq.is_string() ? Value(std::string()) : Value::list({});
  size_t unit = seq.is_string() ? seq.str().size() : seq.items().size();
  if (unit > 0 && static_cast<uint64_t>(n) > kMaxSize / unit) throw Failure("the repeated value is too large");
  if (seq.is_string()) {
    std::string s;
    for (int64_t i = 0; i < n; i++) s += seq.str();
    return Value(std::move(s));
  }
  std::vector<Value> out;
  for (int64_t i = 0; i < n; i++) out.insert(out.end(), seq.items().begin(), seq.items().end());
  return Value::list(std::move(out));
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) throw Failure(a.undefined_message());
  if (b.is_undefined()) throw Failure(b.undefined_message());
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      if (a.str().size() + b.str().size() > kMaxSize) throw Failure("the string is too large");
      return Value(a.str() + b.str());
    }
    if (a.is_list() && b.is_list()) {
      std::vector<Value> v = a.items();
      v.insert(v.end(), b.items().begin(), b.items().end());
      return Value::list(std::move(v));
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && is_int_value(b)) return repeat(a, b.as_int());
    if ((b.is_string() || b.is_list()) && is_int_value(a)) return repeat(b, a.as_int());
  }
  if (!a.is_number() || !b.is_number()) type_error(op, a, b);
  bool ints = is_int_value(a) && is_int_value(b);
  if (op == "/") {
    if (b.as_double() == 0) throw Failure("division by zero");
    return Value(a.as_double() / b.as_double());
  }
  if (ints) {
    int64_t x = a.as_int(), y = b.as_int(), r = 0;
    if (op == "+" && !__builtin_add_overflow(x, y, &r)) return Value(r);
    if (op == "-" && !__builtin_sub_overflow(x, y, &r)) return Value(r);
    if (op == "*" && !__builtin_mul_overflow(x, y, &r)) return Value(r);
    if (op == "//" || op == "%") {
      if (y == 0) throw Failure("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) throw Failure("integer overflow");
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) q--, m += y;
      return Value(op == "//" ? q : m);
    }
    if (op == "**" && y >= 0) {
      r = 1;
      for (int64_t i = 0; i < y; i++)
        if (__builtin_mul_overflow(r, x, &r)) throw Failure("integer overflow");
      return Value(r);
    }
    if (op != "**") throw Failure("integer overflow");
  }
  double x = a.as_double(), y = b.as_double();
  if (op == "+") return Value(x + y);
  if (op == "-") return Value(x - y);
  if (op == "*") return Value(x * y);
  if (op == "**") return Value(std::pow(x, y));
  if (y == 0) throw Failure("float division by zero");
  double q = std::floor(x / y);
  if (op == "//") return Value(q);
  double m = std::fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return Value(m);
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string())
      throw Failure(std::string("'in <string>' requires string as left operand, not ") + item.type_name());
    return container.str().find(item.str()) != std::string::npos;
  }
  if (container.is_dict() && !container.dict().is_namespace) return container.dict().lookup(item) != nullptr;
  for (const Value& v : iterate(container))
    if (equals(v, item)) return true;
  return false;
}

Value compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return Value(equals(a, b));
  if (op == "!=") return Value(!equals(a, b));
  if (op == "in") return Value(contains(b, a));
  if (op == "not in") return Value(!contains(b, a));
  if (a.is_undefined()) throw Failure(a.undefined_message());
  if (b.is_undefined()) throw Failure(b.undefined_message());
  bool ok = true;
  bool r = false;
  if (op == "<") r = less(a, b, ok);
  else if (op == ">") r = less(b, a, ok);
  else if (op == "<=") r = !less(b, a, ok);
  else if (op == ">=") r = !less(a, b, ok);
  if (!ok)
    throw Failure("'" + op + "' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
  return Value(r);
}

class Interp {
 public:
  Interp(const Value& globals, int64_t max_steps) : globals_(globals), max_steps_(max_steps) {}

  std::string run(const Body& body) {
    Scope root;
    root_ = &root;
    std::string out;
    if (exec(body, root, out) != Flow::normal) throw Failure("'break' or 'continue' outside a loop");
    return out;
  }

 private:
  void step(int line) {
    if (++steps_ > max_steps_)
      template_error(line, "the template runs too long (more than " + std::to_string(max_steps_) + " steps)");
  }

  static void append(std::string& out, const std::string& s) {
    if (out.size() + s.size() > kMaxSize) throw Failure("the output is too large");
    out += s;
  }

  Flow exec(const Body& body, Scope& s, std::string& out) {
    for (const auto& n : body) {
      Flow f = exec_node(*n, s, out);
      if (f != Flow::normal) return f;
    }
    return Flow::normal;
  }

  // Counts one level of nesting while it lives; more than kMaxNesting is an error.
  struct Nested {
    Nested(Interp& in, int line) : in_(in) {
      if (++in_.nesting_ > kMaxNesting)
        template_error(line, "the template nests too deeply (more than " + std::to_string(kMaxNesting) +
                                 " statements, expressions and macro calls inside one another)");
    }
    ~Nested() { in_.nesting_--; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;
    Interp& in_;
  };

  Flow exec_node(const Node& n, Scope& s, std::string& out) {
    step(n.line);
    Nested nested(*this, n.line);
    switch (n.kind) {
      case Node::Kind::text: append(out, n.text); return Flow::normal;
      case Node::Kind::output: append(out, eval(*n.expr, s).to_string()); return Flow::normal;
      case Node::Kind::if_:
        for (const auto& [cond, body] : n.branches)
          if (!cond || eval(*cond, s).truthy()) return exec(body, s, out);
        return Flow::normal;
      case Node::Kind::for_: exec_for(n, s, out); return Flow::normal;
      case Node::Kind::set: assign(*n.target, eval(*n.expr, s), s); return Flow::normal;
      case Node::Kind::set_block: {
        std::string text;
        Flow f = exec(n.body, s, text);
        assign(*n.target, Value(std::move(text)), s);
        return f;
      }
      case Node::Kind::macro: {
        const Node* node = &n;
        s.set(n.text, Value::function([this, node](CallArgs& a) { return call_macro(*node, a); }));
        return Flow::normal;
      }
      case Node::Kind::break_: return Flow::break_;
      case Node::Kind::continue_: return Flow::continue_;
      case Node::Kind::block: {  // like transformers' {% generation %}: a call block, its own scope
        Scope bs{&s, {}};
        return exec(n.body, bs, out);
      }
      case Node::Kind::filter: {  // {% filter %}: the body in its own scope, then the filters
        Scope bs{&s, {}};
        std::string text;
        Flow f = exec(n.body, bs, text);
        append(out, filter_chain(*n.expr, Value(std::move(text)), s).to_string());
        return f;
      }
    }
    return Flow::normal;
  }

  // A {% filter %} block's chain applied to `text` (the placeholder at its innermost end).
  Value filter_chain(const Expr& e, Value text, Scope& s) {
    if (e.kind != Expr::Kind::filter) return text;
    Value subject = filter_chain(*e.args[0], std::move(text), s);
    CallArgs a = eval_args(e, 1, s);
    return guarded(e.line, [&] { return apply_filter(e.name, subject, a); });
  }

  void exec_for(const Node& n, Scope& s, std::string& out) {
    std::vector<Value> all = guarded(n.expr->line, [&] { return iterate(eval(*n.expr, s)); });
    std::vector<Value> items;
    if (n.cond) {
      for (auto& v : all) {
        Scope fs{&s, {}};
        assign(*n.target, v, fs);
        if (eval(*n.cond, fs).truthy()) items.push_back(std::move(v));
      }
    } else {
      items = std::move(all);
    }
    const int64_t len = static_cast<int64_t>(items.size());
    // One loop object, updated in place each iteration (a loop variable cannot outlive its loop).
    auto index = std::make_shared<int64_t>(0);
    Value cycle = Value::function([index](CallArgs& a) {
      if (a.pos.empty()) throw Failure("no items for cycling given");
      return a.pos[static_cast<size_t>(*index) % a.pos.size()];
    });
    Value loop = Value::make_dict({{"index", Value()}, {"index0", Value()}, {"revindex", Value()},
                                   {"revindex0", Value()}, {"first", Value()}, {"last", Value()},
                                   {"length", Value(len)}, {"previtem", Value()}, {"nextitem", Value()},
                                   {"depth", Value(1)}, {"depth0", Value(0)}, {"cycle", std::move(cycle)}});
    loop.mutable_dict().changes = true;
    auto& fields = loop.mutable_dict().items;
    auto at = [&](int64_t j) { return j >= 0 && j < len ? items[static_cast<size_t>(j)] : Value(); };
    Scope is{&s, {}};
    for (int64_t i = 0; i < len; i++) {
      step(n.line);
      *index = i;
      fields[0].second = Value(i + 1);
      fields[1].second = Value(i);
      fields[2].second = Value(len - i);
      fields[3].second = Value(len - i - 1);
      fields[4].second = Value(i == 0);
      fields[5].second = Value(i == len - 1);
      fields[7].second = at(i - 1);
      fields[8].second = at(i + 1);
      is.vars.clear();
      is.set("loop", loop);
      guarded(n.line, [&] {
        assign(*n.target, items[static_cast<size_t>(i)], is);
        return 0;
      });
      if (exec(n.body, is, out) == Flow::break_) break;
    }
    if (len == 0 && exec(n.else_body, s, out) != Flow::normal) throw Failure("'break' or 'continue' outside a loop");
  }

  void assign(const Expr& target, const Value& v, Scope& s) {
    if (target.kind == Expr::Kind::name) {
      s.set(target.name, v);
    } else if (target.kind == Expr::Kind::attr) {
      Value ns = eval(*target.args[0], s);
      if (!ns.is_dict() || !ns.dict().is_namespace)
        template_error(target.line, "cannot assign attribute on non-namespace object");
      if (v.holds_changing_dict())
        template_error(target.line, "a namespace attribute cannot hold a namespace or a loop object");
      guarded(target.line, [&] {
        ns.mutable_dict().set(Value(target.name), v);
        return 0;
      });
    } else {
      std::vector<Value> parts = guarded(target.line, [&] { return iterate(v); });
      if (parts.size() != target.args.size())
        template_error(target.line, "cannot unpack " + std::to_string(parts.size()) + " values into " +
                                        std::to_string(target.args.size()) + " names");
      for (size_t i = 0; i < parts.size(); i++) assign(*target.args[i], parts[i], s);
    }
  }

  Value call_macro(const Node& m, CallArgs& a) {
    if (depth_ >= kMaxCallDepth) throw Failure("macros nested too deeply");
    if (a.pos.size() > m.params.size())
      throw Failure("macro '" + m.text + "' takes not more than " + std::to_string(m.params.size()) + " argument(s)");
    Scope ms{root_, {}};
    for (size_t i = 0; i < m.params.size(); i++) {
      const auto& [name, def] = m.params[i];
      if (i < a.pos.size()) ms.set(name, a.pos[i]);
      else if (def) ms.set(name, eval(*def, ms));
      else ms.set(name, Value::undefined("'" + name + "' is undefined (an argument of macro '" + m.text + "')"));
    }
    for (auto& [k, v] : a.kw) {
      bool known = false;
      for (const auto& p : m.params) known = known || p.first == k;
      if (!known) throw Failure("macro '" + m.text + "' takes no keyword argument '" + k + "'");
      ms.set(k, v);
    }
    depth_++;
    std::string out;
    Flow f = exec(m.body, ms, out);
    depth_--;
    if (f != Flow::normal) throw Failure("'break' or 'continue' outside a loop");
    return Value(std::move(out));
  }

  // Runs f(); a Failure becomes "template line N: …".
  template <class F>
  static auto guarded(int line, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const Failure& e) {
      template_error(line, e.what());
    }
  }

  Value eval(const Expr& e, Scope& s) {
    step(e.line);
    Nested nested(*this, e.line);
    return guarded(e.line, [&] { return eval_inner(e, s); });
  }

  Value lookup(const std::string& name, Scope& s) {
    if (const Value* v = s.find(name)) return *v;
    if (globals_.is_dict())
      if (const Value* v = globals_.dict().find(name)) return *v;
    Value g = builtin_global(name);
    return g.is_undefined() ? Value::undefined("'" + name + "' is undefined") : g;
  }

  CallArgs eval_args(const Expr& e, size_t first, Scope& s) {
    CallArgs a;
    for (size_t i = first; i < e.args.size(); i++) a.pos.push_back(eval(*e.args[i], s));
    for (const auto& [k, v] : e.kwargs) a.kw.emplace_back(k, eval(*v, s));
    return a;
  }

  Value eval_inner(const Expr& e, Scope& s) {
    switch (e.kind) {
      case Expr::Kind::literal: return e.value;
      case Expr::Kind::name: return lookup(e.name, s);
      case Expr::Kind::attr: return get_attr(eval(*e.args[0], s), e.name);
      case Expr::Kind::item: {
        Value obj = eval(*e.args[0], s);
        return get_item(obj, eval(*e.args[1], s));
      }
      case Expr::Kind::slice: {
        Value obj = eval(*e.args[0], s);
        Value part[3];
        for (int i = 0; i < 3; i++)
          if (e.args[static_cast<size_t>(i) + 1]) part[i] = eval(*e.args[static_cast<size_t>(i) + 1], s);
        return slice(obj, part[0], part[1], part[2]);
      }
      case Expr::Kind::call: {
        Value callee = eval(*e.args[0], s);
        CallArgs a = eval_args(e, 1, s);
        if (callee.is_undefined()) throw Failure(callee.undefined_message());
        if (!callee.is_function()) throw Failure(std::string("'") + callee.type_name() + "' object is not callable");
        return callee.fn()(a);
      }
      case Expr::Kind::filter: {
        Value subject = eval(*e.args[0], s);
        CallArgs a = eval_args(e, 1, s);
        return apply_filter(e.name, subject, a);
      }
      case Expr::Kind::test: {
        Value subject = eval(*e.args[0], s);
        CallArgs a = eval_args(e, 1, s);
        return Value(apply_test(e.name, subject, a) != e.negate);
      }
      case Expr::Kind::unary: {
        Value v = eval(*e.args[0], s);
        if (e.name == "not") return Value(!v.truthy());
        if (v.is_undefined()) throw Failure(v.undefined_message());
        if (!v.is_number()) throw Failure(std::string("bad operand type for unary ") + e.name + ": '" + v.type_name() + "'");
        if (e.name == "+") return is_int_value(v) ? Value(v.as_int()) : v;
        if (is_int_value(v)) {
          if (v.as_int() == INT64_MIN) throw Failure("integer overflow");
          return Value(-v.as_int());
        }
        return Value(-v.as_double());
      }
      case Expr::Kind::binary: return eval_binary(e, s);
      case Expr::Kind::compare: return eval_compare(e, s);
      case Expr::Kind::cond:
        if (eval(*e.args[1], s).truthy()) return eval(*e.args[0], s);
        return e.args[2] ? eval(*e.args[2], s) : Value::undefined("the inline if has no else");
      case Expr::Kind::list:
      case Expr::Kind::tuple: {
        std::vector<Value> items;
        for (const auto& a : e.args) items.push_back(eval(*a, s));
        return Value::list(std::move(items), e.kind == Expr::Kind::tuple);
      }
      case Expr::Kind::dict: {
        Value d = Value::make_dict();
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          Value k = eval(*e.args[i], s);
          if (k.is_undefined()) throw Failure(k.undefined_message());
          if (k.is_dict() || (k.is_list() && !k.is_tuple()) || k.is_function())
            throw Failure(std::string("unhashable type: '") + k.type_name() + "'");
          d.mutable_dict().set(std::move(k), eval(*e.args[i + 1], s));
        }
        return d;
      }
    }
    throw Failure("unknown expression");
  }

  Value eval_binary(const Expr& e, Scope& s) {
    Value a = eval(*e.args[0], s);
    if (e.code == 'a') return a.truthy() ? eval(*e.args[1], s) : a;
    if (e.code == 'o') return a.truthy() ? a : eval(*e.args[1], s);
    Value b = eval(*e.args[1], s);
    if (e.code == '~') {
      std::string r = a.to_string() + b.to_string();
      if (r.size() > kMaxSize) throw Failure("the string is too large");
      return Value(std::move(r));
    }
    return arithmetic(e.name, a, b);
  }

  Value eval_compare(const Expr& e, Scope& s) {
    Value left = eval(*e.args[0], s);
    for (size_t i = 0;; i++) {
      Value right = eval(*e.args[i + 1], s);
      Value r = compare(e.ops[i], left, right);
      if (!r.truthy() || i + 1 == e.ops.size()) return r;
      left = std::move(right);
    }
  }

  const Value& globals_;
  Scope* root_ = nullptr;
  int64_t max_steps_;
  int64_t steps_ = 0;
  int depth_ = 0;
  int nesting_ = 0;
};

}  // namespace

Template::Template(std::string_view source, const Options& opt)
    : body_(std::make_unique<Body>(parse(lex(source, LexOptions{opt.trim_blocks, opt.lstrip_blocks})))),
      max_steps_(opt.max_steps),
      max_bytes_(opt.max_bytes) {}
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

std::string Template::render(const Value& globals) const {
  RenderBudget budget(max_bytes_);
  try {
    return Interp(globals, max_steps_).run(*body_);
  } catch (const Failure& e) {
    fail(Status::invalid_argument, std::string("template: ") + e.what());
  }
}

}  // namespace qmm::llm::jinja
