// Jinja's filters (the subset in builtins.h), with jinja2 3.1's behaviour.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "text/jinja/builtins.h"
#include "text/jinja/strings.h"

namespace qmm::llm::jinja {
namespace {

const char* const kFilters[] = {"abs", "attr", "capitalize", "count", "d", "default", "dictsort", "e", "escape",
                                "first", "float", "indent", "int", "items", "join", "last", "length", "list", "lower", "map",
                                "max", "min", "reject", "rejectattr", "replace", "reverse", "round", "safe", "select",
                                "selectattr", "sort", "string", "sum", "title", "tojson", "trim", "unique", "upper"};

// Jinja's attribute getter: "a.b.0" looks up each part as an item, then as an attribute.
Value attribute(const Value& v, const std::string& path) {
  Value cur = v;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    int64_t index = 0;  // an all-digits part within int64 is an index
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
    bool digits = !part.empty() && part[0] != '-' && ec == std::errc() && end == part.data() + part.size();
    cur = digits ? get_item(cur, Value(index)) : get_item(cur, Value(part));
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

int64_t length(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return 0;
    case Value::Kind::string: return static_cast<int64_t>(py_len(v.str()));
    case Value::Kind::list: return static_cast<int64_t>(v.items().size());
    case Value::Kind::dict:
      if (v.dict().is_namespace) throw Failure("object of type 'Namespace' has no len()");
      return static_cast<int64_t>(v.dict().items.size());
    default: throw Failure(std::string("object of type '") + v.type_name() + "' has no len()");
  }
}

Value to_int(const Value& v, const Value& def, int64_t base) {
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.kind() == Value::Kind::number) {
    double d = v.as_double();
    return std::isfinite(d) && std::fabs(d) < 9.2e18 ? Value(static_cast<int64_t>(d)) : def;
  }
  if (v.is_string()) {
    std::string s = py_strip(v.str(), Value(), true, true);
    std::string digits;
    for (char c : s)
      if (c != '_') digits += c;
    if (!digits.empty()) {
      errno = 0;
      char* end = nullptr;
      long long r = std::strtoll(digits.c_str(), &end, static_cast<int>(base));
      if (errno == 0 && *end == 0) return Value(static_cast<int64_t>(r));
      double d = std::strtod(digits.c_str(), &end);
      if (*end == 0 && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value(static_cast<int64_t>(d));
    }
  }
  return def;
}

Value to_float(const Value& v, const Value& def) {
  if (v.is_number()) return Value(v.as_double());
  if (v.is_string()) {
    std::string s = py_strip(v.str(), Value(), true, true);
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == 0) return Value(d);
  }
  return def;
}

// Sort key comparison for sort/dictsort/min/max/unique (strings case-insensitive unless asked).
bool sort_less(const Value& a, const Value& b, bool case_sensitive) {
  bool ok = true;
  bool r = (!case_sensitive && a.is_string() && b.is_string()) ? py_lower(a.str()) < py_lower(b.str()) : less(a, b, ok);
  if (!ok) throw Failure(std::string("'<' not supported between instances of '") + a.type_name() + "' and '" + b.type_name() + "'");
  return r;
}

// A stable sort (ties keep their order; std::sort on positions, as libstdc++'s stable_sort
// trips clang's deprecation warnings).
Value sort_items(const std::vector<Value>& items, bool reverse, bool case_sensitive, const Value& attr) {
  std::vector<Value> keys;
  for (const Value& v : items) keys.push_back(attr.is_string() ? attribute(v, attr.str()) : v);
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sort_less(keys[a], keys[b], case_sensitive)) return !reverse;
    if (sort_less(keys[b], keys[a], case_sensitive)) return reverse;
    return a < b;
  });
  std::vector<Value> out;
  for (size_t i : order) out.push_back(items[i]);
  return Value::list(std::move(out));
}

// select / reject / selectattr / rejectattr
Value select(const std::string& name, const Value& seq, CallArgs& a) {
  bool by_attr = name == "selectattr" || name == "rejectattr";
  bool keep = name == "select" || name == "selectattr";
  size_t first = by_attr ? 1 : 0;
  if (by_attr && (a.pos.empty() || !a.pos[0].is_string())) throw Failure(name + " needs an attribute name");
  std::string test;
  CallArgs test_args;
  if (a.pos.size() > first) {
    if (!a.pos[first].is_string()) throw Failure(name + ": the test name must be a string");
    test = a.pos[first].str();
    if (!has_test(test)) throw Failure("no test named '" + test + "'");
    test_args.pos.assign(a.pos.begin() + static_cast<std::ptrdiff_t>(first + 1), a.pos.end());
  }
  if (!a.kw.empty()) throw Failure(name + " takes no keyword arguments");
  std::vector<Value> out;
  if (!seq.truthy()) return Value::list({});  // jinja2 skips a falsy sequence (none included)
  for (const Value& v : iterate(seq)) {
    Value x = by_attr ? attribute(v, a.pos[0].str()) : v;
    bool pass = test.empty() ? x.truthy() : apply_test(test, x, test_args);
    if (pass == keep) out.push_back(v);
  }
  return Value::list(std::move(out));
}

Value map(const Value& seq, CallArgs& a) {
  std::vector<Value> out;
  if (!seq.truthy()) return Value::list({});  // jinja2 skips a falsy sequence (none included)
  Value attr = arg(a, a.pos.size(), "attribute");
  if (attr.is_string()) {
    check_args(a, 0, {"attribute", "default"}, "filter 'map'");
    Value def = arg(a, 99, "default");
    for (const Value& v : iterate(seq)) {
      Value x = attribute(v, attr.str());
      out.push_back(x.is_undefined() && !def.is_undefined() ? def : x);
    }
    return Value::list(std::move(out));
  }
  if (a.pos.empty() || !a.pos[0].is_string()) throw Failure("map needs a filter name or attribute=");
  std::string filter = a.pos[0].str();
  if (!has_filter(filter)) throw Failure("no filter named '" + filter + "'");
  CallArgs rest{std::vector<Value>(a.pos.begin() + 1, a.pos.end()), a.kw};
  for (const Value& v : iterate(seq)) out.push_back(apply_filter(filter, v, rest));
  return Value::list(std::move(out));
}

Value first_or_last(const Value& v, bool first) {
  std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined(std::string("No ") + (first ? "first" : "last") + " item, sequence was empty.");
  return first ? items.front() : items.back();
}

Value min_max(const Value& v, CallArgs& a, bool is_max) {
  check_args(a, 2, {"case_sensitive", "attribute"}, is_max ? "filter 'max'" : "filter 'min'");
  std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  Value s = sort_items(items, is_max, arg(a, 0, "case_sensitive", Value(false)).truthy(), arg(a, 1, "attribute"));
  return s.items().front();
}

// Python's str.splitlines(): lines end at \n, \r, \r\n, \v, \f, \x1c-\x1e, U+0085, U+2028, U+2029.
std::vector<std::string> splitlines(const std::string& s) {
  std::vector<std::string> lines;
  std::string line;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t end = 0;  // the length of a line boundary at i
    if (c == '\r') {
      end = i + 1 < s.size() && s[i + 1] == '\n' ? 2 : 1;
    } else if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e)) {
      end = 1;
    } else if (s.compare(i, 2, "\xC2\x85") == 0) {
      end = 2;
    } else if (s.compare(i, 3, "\xE2\x80\xA8") == 0 || s.compare(i, 3, "\xE2\x80\xA9") == 0) {
      end = 3;
    }
    if (end == 0) {
      line += s[i++];
      continue;
    }
    lines.push_back(std::move(line));
    line.clear();
    i += end;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// jinja2's indent(width=4, first=False, blank=False): every line after the first (and the first
// too with `first`) gets `width` spaces (or the string `width`); empty lines only with `blank`.
Value indent(const Value& v, CallArgs& a) {
  check_args(a, 3, {"width", "first", "blank"}, "filter 'indent'");
  const Value width = arg(a, 0, "width", Value(int64_t{4}));
  const std::string pad = width.is_string() ? width.str()
                                            : std::string(static_cast<size_t>(std::clamp<int64_t>(
                                                              int_arg(width, "filter 'indent'"), 0, static_cast<int64_t>(kMaxSize))), ' ');
  if (!v.is_string()) throw Failure(std::string("unsupported operand type(s) for +=: '") + v.type_name() + "' and 'str'");
  const std::vector<std::string> lines = splitlines(v.str() + "\n");
  const bool blank = arg(a, 2, "blank", Value(false)).truthy();
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += '\n';
    if (i > 0 && (blank || !lines[i].empty())) out += pad;
    out += lines[i];
    if (out.size() > kMaxSize) throw Failure("the string is too large");
  }
  if (arg(a, 1, "first", Value(false)).truthy()) out = pad + out;
  return Value(std::move(out));
}

}  // namespace

bool has_filter(const std::string& name) {
  for (const char* f : kFilters)
    if (name == f) return true;
  return false;
}

Value apply_filter(const std::string& name, const Value& v, CallArgs& a) {
  if (!has_filter(name)) throw Failure("no filter named '" + name + "'");  // (where the parser let it pass: check_names)
  const std::string what = "filter '" + name + "'";
  if (name == "default" || name == "d") {
    check_args(a, 2, {"default_value", "boolean"}, what);
    bool use_default = v.is_undefined() || (arg(a, 1, "boolean", Value(false)).truthy() && !v.truthy());
    return use_default ? arg(a, 0, "default_value", Value("")) : v;
  }
  if (name == "safe") return v;
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") return select(name, v, a);
  if (name == "map") return map(v, a);
  if (name == "min" || name == "max") return min_max(v, a, name == "max");
  if (name == "tojson") {
    check_args(a, 1, {"indent", "ensure_ascii"}, what);
    Value indent = arg(a, 0, "indent");
    if (arg(a, 9, "ensure_ascii", Value(false)).truthy()) throw Failure("tojson(ensure_ascii=True) is not supported");
    return Value(v.to_json(indent.is_none() || indent.is_undefined() ? -1 : static_cast<int>(int_arg(indent, what))));
  }
  if (name == "indent") return indent(v, a);
  if (name == "trim") {
    check_args(a, 1, {"chars"}, what);
    return Value(py_strip(v.to_string(), arg(a, 0, "chars"), true, true));
  }
  if (name == "replace") {
    check_args(a, 3, {"count"}, what);
    if (a.pos.size() < 2) throw Failure(what + " takes 2 arguments");
    Value count = arg(a, 2, "count");
    return Value(py_replace(v.to_string(), a.pos[0].to_string(), a.pos[1].to_string(),
                            count.is_undefined() || count.is_none() ? -1 : int_arg(count, what)));
  }
  if (name == "join") {
    check_args(a, 2, {"d", "attribute"}, what);
    std::string sep = arg(a, 0, "d", Value("")).to_string(), out;
    Value attr = arg(a, 1, "attribute");
    bool first = true;
    for (const Value& x : iterate(v)) {
      out += (first ? "" : sep) + (attr.is_undefined() ? x : attribute(x, attr.to_string())).to_string();
      first = false;
      if (out.size() > kMaxSize) throw Failure("the string is too large");
    }
    return Value(std::move(out));
  }
  if (name == "int") {
    check_args(a, 2, {"default", "base"}, what);
    return to_int(v, arg(a, 0, "default", Value(0)), int_arg(arg(a, 1, "base", Value(10)), what));
  }
  if (name == "float") {
    check_args(a, 1, {"default"}, what);
    return to_float(v, arg(a, 0, "default", Value(0.0)));
  }
  if (name == "round") {
    check_args(a, 2, {"precision", "method"}, what);
    double p = std::pow(10.0, static_cast<double>(int_arg(arg(a, 0, "precision", Value(0)), what)));
    std::string method = arg(a, 1, "method", Value("common")).to_string();
    double x = v.is_number() ? v.as_double() : throw Failure(what + " needs a number");
    double r = method == "floor" ? std::floor(x * p) : method == "ceil" ? std::ceil(x * p) : std::nearbyint(x * p);
    return Value(r / p);
  }
  if (name == "sort") {
    check_args(a, 3, {"reverse", "case_sensitive", "attribute"}, what);
    return sort_items(iterate(v), arg(a, 0, "reverse", Value(false)).truthy(),
                      arg(a, 1, "case_sensitive", Value(false)).truthy(), arg(a, 2, "attribute"));
  }
  if (name == "dictsort") {
    check_args(a, 3, {"case_sensitive", "by", "reverse"}, what);
    if (!v.is_dict()) throw Failure(what + " needs a dict");
    std::vector<Value> items;
    for (const auto& [k, x] : v.dict().items) items.push_back(Value::list({k, x}, true));
    bool by_value = arg(a, 1, "by", Value("key")).to_string() == "value";
    return sort_items(items, arg(a, 2, "reverse", Value(false)).truthy(),
                      arg(a, 0, "case_sensitive", Value(false)).truthy(), Value(by_value ? "1" : "0"));
  }
  if (name == "attr") {
    check_args(a, 1, {}, what);
    std::string attr_name = arg(a, 0, "name").to_string();  // attributes only: no dict keys
    if (v.is_dict() && !v.dict().is_namespace && v.dict().find(attr_name)) return Value::undefined("no attribute");
    return get_attr(v, attr_name);
  }
  if (name == "sum") {
    check_args(a, 2, {"attribute", "start"}, what);
    Value attr = arg(a, 0, "attribute"), total = arg(a, 1, "start", Value(0));
    for (const Value& x : iterate(v)) {
      Value y = attr.is_undefined() ? x : attribute(x, attr.to_string());
      if (!total.is_number() || !y.is_number()) throw Failure(what + " needs numbers");
      int64_t r = 0;
      if (!(total.is_int() || total.is_bool()) || !(y.is_int() || y.is_bool()))
        total = Value(total.as_double() + y.as_double());
      else if (__builtin_add_overflow(total.as_int(), y.as_int(), &r))
        throw Failure(what + ": integer overflow");
      else
        total = Value(r);
    }
    return total;
  }
  check_args(a, 0, {}, what);
  if (name == "length" || name == "count") return Value(length(v));
  if (name == "first" || name == "last") return first_or_last(v, name == "first");
  if (name == "string") return Value(v.to_string());
  if (name == "upper") return Value(py_upper(v.to_string()));
  if (name == "lower") return Value(py_lower(v.to_string()));
  if (name == "capitalize") return Value(py_capitalize(v.to_string()));
  if (name == "title") return Value(jinja_title(v.to_string()));
  if (name == "escape" || name == "e") return Value(html_escape(v.to_string()));
  if (name == "list") return Value::list(iterate(v));
  if (name == "items") {
    if (v.is_undefined()) return Value::list({});
    if (!v.is_dict() || v.dict().is_namespace) throw Failure(what + " needs a mapping, got " + v.type_name());
    std::vector<Value> out;
    for (const auto& [k, x] : v.dict().items) out.push_back(Value::list({k, x}, true));
    return Value::list(std::move(out));
  }
  if (name == "abs") {
    if ((v.is_int() || v.is_bool()) && v.as_int() == INT64_MIN) throw Failure("abs(): integer overflow");
    if (v.is_int() || v.is_bool()) return Value(static_cast<int64_t>(std::llabs(v.as_int())));
    if (v.is_number()) return Value(std::fabs(v.as_double()));
    throw Failure(std::string("bad operand type for abs(): '") + v.type_name() + "'");
  }
  if (name == "reverse") {
    if (v.is_string()) {
      auto cps = code_points(v.str());
      std::string r;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it) r += *it;
      return Value(std::move(r));
    }
    std::vector<Value> items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (name == "unique") {
    std::vector<Value> out;
    for (const Value& x : iterate(v)) {
      bool seen = false;
      for (const Value& y : out)
        seen = seen || (x.is_string() && y.is_string() ? py_lower(x.str()) == py_lower(y.str()) : equals(x, y));
      if (!seen) out.push_back(x);
    }
    return Value::list(std::move(out));
  }
  throw Failure("no filter named '" + name + "'");
}

}  // namespace qmm::llm::jinja
