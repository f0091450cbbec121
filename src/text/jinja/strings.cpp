#include "text/jinja/strings.h"

#include <algorithm>

#include "text/jinja/builtins.h"

namespace qmm::llm::jinja {
namespace {

char up(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }
char down(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
bool ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool cased(std::string_view cp) { return cp.size() > 1 || ascii_alpha(cp[0]); }

const std::string& str_arg(const Value& v, const std::string& what) {
  if (!v.is_string()) throw Failure(what + " must be str, not " + v.type_name());
  return v.str();
}

// Index of the code point starting at byte `pos`.
int64_t cp_index(std::string_view s, size_t pos) { return static_cast<int64_t>(py_len(s.substr(0, pos))); }

bool all_of_cps(const std::string& s, bool (*pred)(std::string_view)) {
  if (s.empty()) return false;
  for (auto cp : code_points(s))
    if (!pred(cp)) return false;
  return true;
}

bool prefix_or_suffix(const std::string& s, const Value& what, bool prefix) {
  auto one = [&](const Value& v) {
    const std::string& p = str_arg(v, prefix ? "startswith first arg" : "endswith first arg");
    return p.size() <= s.size() && (prefix ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0);
  };
  if (what.is_list()) return std::any_of(what.items().begin(), what.items().end(), one);
  return one(what);
}

// str.format with {} {0} {name} fields and {{ }} escapes (no format specs).
std::string py_format(const std::string& f, const CallArgs& a) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); i++) {
    char c = f[i];
    if ((c == '{' || c == '}') && i + 1 < f.size() && f[i + 1] == c) {
      out += c;
      i++;
      continue;
    }
    if (c == '}') throw Failure("Single '}' encountered in format string");
    if (c != '{') {
      out += c;
      continue;
    }
    size_t end = f.find('}', i);
    if (end == std::string::npos) throw Failure("Single '{' encountered in format string");
    std::string field = f.substr(i + 1, end - i - 1);
    if (field.find_first_of(":!.[") != std::string::npos) throw Failure("format specs are not supported");
    const Value* v = nullptr;
    if (field.empty() || std::all_of(field.begin(), field.end(), [](char d) { return d >= '0' && d <= '9'; })) {
      size_t idx = field.empty() ? auto_index++ : std::stoul(field);
      if (idx >= a.pos.size()) throw Failure("Replacement index " + std::to_string(idx) + " out of range");
      v = &a.pos[idx];
    } else {
      for (const auto& [k, x] : a.kw)
        if (k == field) v = &x;
      if (!v) throw Failure("KeyError: '" + field + "'");
    }
    out += v->to_string();
    if (out.size() > kMaxSize) throw Failure("the string is too large");
    i = end;
  }
  return out;
}

Value split_list(const std::vector<std::string>& parts) {
  std::vector<Value> v;
  for (const auto& p : parts) v.emplace_back(p);
  return Value::list(std::move(v));
}

Value call_str_method(const std::string& s, const std::string& name, CallArgs& a) {
  const std::string what = "str." + name + "()";
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    check_args(a, 1, {"chars"}, what);
    return Value(py_strip(s, arg(a, 0, "chars"), name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    check_args(a, 2, {"sep", "maxsplit"}, what);
    return split_list(py_split(s, arg(a, 0, "sep"), int_arg(arg(a, 1, "maxsplit", Value(-1)), what), name == "rsplit"));
  }
  if (name == "startswith" || name == "endswith") {
    check_args(a, 1, {}, what);
    if (a.pos.empty()) throw Failure(what + " takes exactly one argument");
    return Value(prefix_or_suffix(s, a.pos[0], name == "startswith"));
  }
  if (name == "replace") {
    check_args(a, 3, {"count"}, what);
    if (a.pos.size() < 2) throw Failure(what + " takes at least 2 arguments");
    return Value(py_replace(s, str_arg(a.pos[0], what), str_arg(a.pos[1], what),
                            int_arg(arg(a, 2, "count", Value(-1)), what)));
  }
  if (name == "format") return Value(py_format(s, a));
  check_args(a, 1, {}, what);
  bool no_args = a.pos.empty();
  if (no_args) {
    if (name == "upper") return Value(py_upper(s));
    if (name == "lower") return Value(py_lower(s));
    if (name == "title") return Value(py_title(s));
    if (name == "capitalize") return Value(py_capitalize(s));
    if (name == "isdigit") return Value(all_of_cps(s, [](std::string_view c) { return c.size() == 1 && c[0] >= '0' && c[0] <= '9'; }));
    if (name == "isalpha") return Value(all_of_cps(s, [](std::string_view c) { return c.size() == 1 && ascii_alpha(c[0]); }));
    if (name == "isalnum")
      return Value(all_of_cps(s, [](std::string_view c) { return c.size() == 1 && (ascii_alpha(c[0]) || (c[0] >= '0' && c[0] <= '9')); }));
    if (name == "isspace") return Value(all_of_cps(s, is_space));
    if (name == "islower" || name == "isupper") {
      bool any = false;
      for (char c : s) {
        if (!ascii_alpha(c)) continue;
        any = true;
        if ((name == "islower") != (c >= 'a')) return Value(false);
      }
      return Value(any);
    }
    if (name == "splitlines") {
      std::vector<std::string> parts = py_split(s, Value("\n"), -1, false);
      if (!parts.empty() && parts.back().empty()) parts.pop_back();
      return split_list(parts);
    }
  }
  if (name == "find" || name == "rfind" || name == "count") {
    if (no_args) throw Failure(what + " takes exactly one argument");
    const std::string& sub = str_arg(a.pos[0], what);
    if (name == "count") {
      if (sub.empty()) return Value(static_cast<int64_t>(py_len(s) + 1));
      int64_t n = 0;
      for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) n++;
      return Value(n);
    }
    size_t p = name == "find" ? s.find(sub) : s.rfind(sub);
    return Value(p == std::string::npos ? int64_t{-1} : cp_index(s, p));
  }
  if (name == "join") {
    if (no_args) throw Failure(what + " takes exactly one argument");
    std::string out;
    bool first = true;
    for (const Value& v : iterate(a.pos[0])) {
      if (!first) out += s;
      first = false;
      out += str_arg(v, "sequence item");
    }
    return Value(std::move(out));
  }
  throw Failure(what + ": wrong arguments");
}

}  // namespace

size_t py_len(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string py_strip(std::string_view s, const Value& chars, bool left, bool right) {
  std::vector<std::string_view> set;
  bool whitespace = chars.is_none() || chars.is_undefined();
  if (!whitespace) set = code_points(str_arg(chars, "strip arg"));
  auto strip_it = [&](std::string_view cp) {
    return whitespace ? is_space(cp) : std::find(set.begin(), set.end(), cp) != set.end();
  };
  auto cont = [&](size_t i) { return (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80; };
  size_t b = 0, e = s.size();
  while (left && b < e) {  // code points from the front
    size_t n = 1;
    while (b + n < e && n < 4 && cont(b + n)) n++;
    if (!strip_it(s.substr(b, n))) break;
    b += n;
  }
  while (right && e > b) {  // and from the back
    size_t p = e - 1;
    while (p > b && e - p < 4 && cont(p)) p--;
    if (!strip_it(s.substr(p, e - p))) break;
    e = p;
  }
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> py_split(std::string_view s, const Value& sep, int64_t maxsplit, bool from_right) {
  std::vector<std::string> out;
  if (!sep.is_none() && !sep.is_undefined()) {
    const std::string& d = str_arg(sep, "split separator");
    if (d.empty()) throw Failure("empty separator");
    if (from_right) {
      size_t end = s.size();
      while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
        size_t p = end >= d.size() ? s.rfind(d, end - d.size()) : std::string_view::npos;
        if (p == std::string_view::npos) break;
        out.emplace_back(s.substr(p + d.size(), end - p - d.size()));
        end = p;
      }
      out.emplace_back(s.substr(0, end));
      std::reverse(out.begin(), out.end());
      return out;
    }
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      size_t p = s.find(d, start);
      if (p == std::string_view::npos) break;
      out.emplace_back(s.substr(start, p - start));
      start = p + d.size();
    }
    out.emplace_back(s.substr(start));
    return out;
  }
  // Whitespace runs; no empty parts.
  std::vector<std::string_view> cps = code_points(s);
  if (from_right) std::reverse(cps.begin(), cps.end());
  size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && is_space(cps[i])) i++;
    if (i == cps.size()) break;
    size_t j = i;
    bool last = maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit;
    if (last) {
      j = cps.size();  // the rest, trailing whitespace included
    } else {
      while (j < cps.size() && !is_space(cps[j])) j++;
    }
    std::string part;
    for (size_t k = i; k < j; k++) part += cps[k];
    if (from_right) {
      std::vector<std::string_view> back = code_points(part);
      std::string fwd;
      for (auto it = back.rbegin(); it != back.rend(); ++it) fwd += *it;
      part = fwd;
    }
    out.push_back(std::move(part));
    i = j;
  }
  if (from_right) std::reverse(out.begin(), out.end());
  return out;
}

std::string py_upper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = up(c);
  return r;
}

std::string py_lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = down(c);
  return r;
}

std::string py_capitalize(std::string_view s) {
  std::string r = py_lower(s);
  if (!r.empty()) r[0] = up(r[0]);
  return r;
}

std::string py_title(std::string_view s) {
  std::string r;
  bool prev_cased = false;
  for (auto cp : code_points(s)) {
    if (cp.size() == 1) r += prev_cased ? down(cp[0]) : up(cp[0]);
    else r += cp;
    prev_cased = cased(cp);
  }
  return r;
}

std::string jinja_title(std::string_view s) {
  std::string r;
  bool word_start = true;
  for (auto cp : code_points(s)) {
    bool sep = is_space(cp) || (cp.size() == 1 && std::string_view("-({[<").find(cp[0]) != std::string_view::npos);
    if (sep) {
      r += cp;
      word_start = true;
    } else if (cp.size() == 1) {
      r += word_start ? up(cp[0]) : down(cp[0]);
      word_start = false;
    } else {
      r += cp;
      word_start = false;
    }
  }
  return r;
}

std::string py_replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts `repl` around every code point
    auto cps = code_points(s);
    int64_t n = 0;
    for (size_t i = 0; i <= cps.size(); i++) {
      if (count < 0 || n < count) out += repl, n++;
      if (i < cps.size()) out += cps[i];
      if (out.size() > kMaxSize) throw Failure("the string is too large");
    }
    return out;
  }
  size_t start = 0;
  int64_t n = 0;
  for (size_t p = s.find(old); p != std::string_view::npos && (count < 0 || n < count); p = s.find(old, start), n++) {
    out.append(s.substr(start, p - start));
    out.append(repl);
    start = p + old.size();
    if (out.size() > kMaxSize) throw Failure("the string is too large");
  }
  out.append(s.substr(start));
  return out;
}

Value str_method(const std::string& s, const std::string& name) {
  static const char* const names[] = {"strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith",
                                      "replace", "format", "upper", "lower", "title", "capitalize", "isdigit",
                                      "isalpha", "isalnum", "isspace", "islower", "isupper", "splitlines", "find",
                                      "rfind", "count", "join"};
  for (const char* n : names)
    if (name == n) return Value::function([s, name](CallArgs& a) { return call_str_method(s, name, a); });
  return Value::undefined("'str object' has no attribute '" + name + "'");
}

}  // namespace qmm::llm::jinja
