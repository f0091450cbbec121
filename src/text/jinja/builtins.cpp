// Attribute and item access, iteration, slicing, tests and globals (filters: filters.cpp).
#include "text/jinja/builtins.h"

#include <ctime>

#include "text/jinja/strings.h"

namespace qmm::llm::jinja {

Value arg(const CallArgs& a, size_t i, std::string_view name, Value def) {
  if (i < a.pos.size()) return a.pos[i];
  for (const auto& [k, v] : a.kw)
    if (k == name) return v;
  return def;
}

void check_args(const CallArgs& a, size_t max_pos, std::initializer_list<std::string_view> names,
                const std::string& what) {
  if (a.pos.size() > max_pos)
    throw Failure(what + " takes at most " + std::to_string(max_pos) + " argument(s), got " + std::to_string(a.pos.size()));
  for (const auto& [k, v] : a.kw) {
    bool ok = false;
    for (auto n : names) ok = ok || n == k;
    if (!ok) throw Failure(what + " got an unexpected keyword argument '" + k + "'");
  }
}

int64_t int_arg(const Value& v, const std::string& what) {
  if (!v.is_int() && !v.is_bool()) throw Failure(what + ": expected an integer, got " + v.type_name());
  return v.as_int();
}

namespace {

std::string object_name(const Value& v) { return std::string("'") + v.type_name() + " object'"; }

Value dict_method(const Value& d, const std::string& name) {
  return Value::function([d, name](CallArgs& a) -> Value {
    const std::string what = "dict." + name + "()";
    if (name == "get") {
      check_args(a, 2, {}, what);
      if (a.pos.empty()) throw Failure(what + " expected at least 1 argument");
      const Value* v = d.dict().lookup(a.pos[0]);
      return v ? *v : a.pos.size() > 1 ? a.pos[1] : Value::none();
    }
    check_args(a, 0, {}, what);
    std::vector<Value> out;
    for (const auto& [k, v] : d.dict().items) {
      if (name == "keys") out.push_back(k);
      else if (name == "values") out.push_back(v);
      else out.push_back(Value::list({k, v}, true));
    }
    return Value::list(std::move(out));
  });
}

// Python's slice.indices(): normalized start/stop for a sequence of length n.
int64_t slice_bound(const Value& v, int64_t n, int64_t step, bool is_start) {
  if (v.is_none() || v.is_undefined()) return step > 0 ? (is_start ? 0 : n) : (is_start ? n - 1 : -1);
  int64_t i = int_arg(v, "slice indices");
  if (i < 0) {
    i += n;
    if (i < 0) i = step > 0 ? 0 : -1;
  } else if (i >= n) {
    i = step > 0 ? n : n - 1;
  }
  return i;
}

bool sameas(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::list:
    case Value::Kind::dict:
    case Value::Kind::function: return equals(a, b) && a.repr() == b.repr();  // no identity: equal contents
    default: return equals(a, b);
  }
}

}  // namespace

std::string strftime_at(long long time, const std::string& fmt) {
  std::time_t t = static_cast<std::time_t>(time);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[512];
  size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
  if (n == 0 && !fmt.empty()) throw Failure("strftime_now: the format gives an empty or too long result");
  return std::string(buf, n);
}

namespace {

Value range(CallArgs& a) {
  check_args(a, 3, {}, "range()");
  if (a.pos.empty()) throw Failure("range expected at least 1 argument, got 0");
  int64_t start = 0, stop = 0, step = 1;
  if (a.pos.size() == 1) {
    stop = int_arg(a.pos[0], "range()");
  } else {
    start = int_arg(a.pos[0], "range()");
    stop = int_arg(a.pos[1], "range()");
    if (a.pos.size() == 3) step = int_arg(a.pos[2], "range()");
  }
  if (step == 0) throw Failure("range() arg 3 must not be zero");
  std::vector<Value> out;
  // A step past the int64 range passes `stop` too: the range ends there.
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    if (out.size() >= 100000) throw Failure("range too big (the sandbox allows 100000 items)");
    out.emplace_back(i);
    if (__builtin_add_overflow(i, step, &i)) break;
  }
  return Value::list(std::move(out));
}

Value make_dict(CallArgs& a, bool is_namespace) {
  Value d = is_namespace ? Value::make_namespace() : Value::make_dict();
  if (a.pos.size() > 1) throw Failure("expected at most 1 positional argument");
  if (!a.pos.empty()) {
    if (!a.pos[0].is_dict() || a.pos[0].dict().is_namespace) throw Failure("expected a dict argument");
    for (const auto& [k, v] : a.pos[0].dict().items) d.mutable_dict().set(k, v);
  }
  for (auto& [k, v] : a.kw) d.mutable_dict().set(Value(k), v);
  return d;
}

}  // namespace

Value get_attr(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Value::Kind::undefined: throw Failure(obj.undefined_message());
    case Value::Kind::dict:
      if (!obj.dict().is_namespace && (name == "items" || name == "keys" || name == "values" || name == "get"))
        return dict_method(obj, name);
      if (const Value* v = obj.dict().find(name)) return *v;
      break;
    case Value::Kind::string: return str_method(obj.str(), name);
    default: break;
  }
  return Value::undefined(object_name(obj) + " has no attribute '" + name + "'");
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) throw Failure(obj.undefined_message());
  if (obj.is_dict()) {
    if (const Value* v = obj.dict().lookup(key)) return *v;
    if (key.is_string()) return get_attr(obj, key.str());
    return Value::undefined(object_name(obj) + " has no element " + key.repr());
  }
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t i = key.as_int();
    if (obj.is_list()) {
      int64_t n = static_cast<int64_t>(obj.items().size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return obj.items()[static_cast<size_t>(i)];
    } else {
      auto cps = code_points(obj.str());
      int64_t n = static_cast<int64_t>(cps.size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return Value(cps[static_cast<size_t>(i)]);
    }
    return Value::undefined(object_name(obj) + " has no element " + std::to_string(key.as_int()));
  }
  if (key.is_string()) return get_attr(obj, key.str());
  return Value::undefined(object_name(obj) + " has no element " + key.repr());
}

Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  if (obj.is_undefined()) throw Failure(obj.undefined_message());
  if (!obj.is_list() && !obj.is_string()) throw Failure(object_name(obj) + " is not subscriptable");
  int64_t st = step.is_none() || step.is_undefined() ? 1 : int_arg(step, "slice indices");
  if (st == 0) throw Failure("slice step cannot be zero");
  std::vector<std::string_view> cps;
  if (obj.is_string()) cps = code_points(obj.str());
  int64_t n = static_cast<int64_t>(obj.is_string() ? cps.size() : obj.items().size());
  int64_t b = slice_bound(start, n, st, true), e = slice_bound(stop, n, st, false);
  std::string s;
  std::vector<Value> items;
  for (int64_t i = b; st > 0 ? i < e : i > e;) {  // a step past the int64 range ends the slice, as in Python
    if (obj.is_string()) s += cps[static_cast<size_t>(i)];
    else items.push_back(obj.items()[static_cast<size_t>(i)]);
    if (__builtin_add_overflow(i, st, &i)) break;
  }
  if (obj.is_string()) return Value(std::move(s));
  return Value::list(std::move(items), obj.is_tuple());
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return {};
    case Value::Kind::list: return v.items();
    case Value::Kind::dict: {
      if (v.dict().is_namespace) throw Failure("'Namespace' object is not iterable");
      std::vector<Value> keys;
      for (const auto& [k, x] : v.dict().items) keys.push_back(k);
      return keys;
    }
    case Value::Kind::string: {
      std::vector<Value> out;
      for (auto cp : code_points(v.str())) out.emplace_back(cp);
      return out;
    }
    default: throw Failure(std::string("'") + v.type_name() + "' object is not iterable");
  }
}

Value builtin_global(const std::string& name) {
  if (name == "range") return Value::function(range);
  if (name == "namespace") return Value::function([](CallArgs& a) { return make_dict(a, true); });
  if (name == "dict") return Value::function([](CallArgs& a) { return make_dict(a, false); });
  if (name == "raise_exception")
    return Value::function([](CallArgs& a) -> Value { throw Failure(arg(a, 0, "message", Value("")).to_string()); });
  if (name == "strftime_now")
    return Value::function([](CallArgs& a) {
      check_args(a, 1, {}, "strftime_now()");
      if (a.pos.empty() || !a.pos[0].is_string()) throw Failure("strftime_now() takes a format string");
      return Value(strftime_at(std::time(nullptr), a.pos[0].str()));
    });
  return Value();
}

namespace {
const char* const kTests[] = {"boolean", "callable", "defined", "divisibleby", "eq", "equalto", "even", "false",
                              "float", "ge", "gt", "in", "integer", "iterable", "le", "lower", "lt", "mapping",
                              "ne", "none", "number", "odd", "sameas", "sequence", "string", "true", "undefined",
                              "upper", "==", "!=", "<", "<=", ">", ">="};
}

bool has_test(const std::string& name) {
  for (const char* t : kTests)
    if (name == t) return true;
  return false;
}

bool apply_test(const std::string& name, const Value& v, CallArgs& a) {
  if (!has_test(name)) throw Failure("no test named '" + name + "'");  // (where the parser let it pass: check_names)
  const std::string what = "test '" + name + "'";
  using K = Value::Kind;
  K k = v.kind();
  static const char* const one_arg[] = {"divisibleby", "sameas", "eq", "equalto", "==", "ne", "!=", "in",
                                        "lt", "<", "gt", ">", "le", "<=", "ge", ">="};
  bool takes_arg = false;
  for (const char* t : one_arg) takes_arg = takes_arg || name == t;
  if (!takes_arg) check_args(a, 0, {}, what);
  if (name == "defined") return k != K::undefined;
  if (name == "undefined") return k == K::undefined;
  if (name == "none") return k == K::none;
  if (name == "boolean") return k == K::boolean;
  if (name == "true") return k == K::boolean && v.as_bool();
  if (name == "false") return k == K::boolean && !v.as_bool();
  if (name == "integer") return k == K::integer;
  if (name == "float") return k == K::number;
  if (name == "number") return v.is_number();
  if (name == "string") return k == K::string;
  if (name == "mapping") return k == K::dict && !v.dict().is_namespace;
  if (name == "iterable") return k == K::list || k == K::dict || k == K::string || k == K::undefined;
  if (name == "sequence") return k == K::list || k == K::dict || k == K::string || k == K::undefined;
  if (name == "callable") return k == K::function;
  if (name == "lower" || name == "upper") {
    Value m = str_method(v.to_string(), name == "lower" ? "islower" : "isupper");
    CallArgs none;
    return m.fn()(none).as_bool();
  }
  if (name == "odd" || name == "even") {
    int64_t i = int_arg(v, what);
    return (i % 2 != 0) == (name == "odd");
  }
  check_args(a, 1, {}, what);
  if (a.pos.size() != 1) throw Failure(what + " takes one argument");
  const Value& b = a.pos[0];
  if (name == "divisibleby") {
    int64_t d = int_arg(b, what);
    if (d == 0) throw Failure("integer division or modulo by zero");
    return int_arg(v, what) % d == 0;
  }
  if (name == "sameas") return sameas(v, b);
  if (name == "eq" || name == "equalto" || name == "==") return equals(v, b);
  if (name == "ne" || name == "!=") return !equals(v, b);
  if (name == "in") {
    if (b.is_string() && v.is_string()) return b.str().find(v.str()) != std::string::npos;
    if (b.is_dict() && !b.dict().is_namespace) return b.dict().lookup(v) != nullptr;
    for (const Value& x : iterate(b))
      if (equals(x, v)) return true;
    return false;
  }
  bool ok = true;
  bool r = false;
  if (name == "lt" || name == "<") r = less(v, b, ok);
  else if (name == "gt" || name == ">") r = less(b, v, ok);
  else if (name == "le" || name == "<=") r = !less(b, v, ok);
  else if (name == "ge" || name == ">=") r = !less(v, b, ok);
  else throw Failure("no test named '" + name + "'");
  if (!ok) throw Failure(what + ": cannot compare '" + v.type_name() + "' and '" + b.type_name() + "'");
  return r;
}

}  // namespace qmm::llm::jinja
