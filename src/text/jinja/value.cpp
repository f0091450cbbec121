#include "text/jinja/value.h"

#include <charconv>
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace qmm::llm::jinja {

namespace {
thread_local RenderBudget* current_budget = nullptr;
}

RenderBudget::RenderBudget(size_t limit) : limit_(limit), outer_(current_budget) { current_budget = this; }
RenderBudget::~RenderBudget() { current_budget = outer_; }

void RenderBudget::charge(size_t bytes) {
  RenderBudget* b = current_budget;
  if (!b) return;
  b->used_ += bytes;
  if (b->used_ > b->limit_)
    throw Failure("the template creates more than " + std::to_string(b->limit_ >> 20) + " MiB of values");
}

namespace {
int child_depth(const Value& v, int d) {
  d = std::max(d, v.depth() + 1);
  if (d > kMaxValueDepth) throw Failure("values nested too deeply (more than " + std::to_string(kMaxValueDepth) + " levels)");
  return d;
}
}  // namespace

const Value* DictData::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k.is_string() && k.str() == key) return &v;
  return nullptr;
}

const Value* DictData::lookup(const Value& key) const {
  for (const auto& [k, v] : items)
    if (equals(k, key)) return &v;
  return nullptr;
}

void DictData::set(Value key, Value v) {
  depth = child_depth(v, depth);
  for (auto& [k, old] : items)
    if (equals(k, key)) {
      old = std::move(v);
      return;
    }
  items.emplace_back(std::move(key), std::move(v));
}

Value::Value(std::string s) : rep_(std::make_shared<const std::string>(std::move(s))) { RenderBudget::charge(str().size()); }

Value Value::list(std::vector<Value> items, bool tuple) {
  RenderBudget::charge(items.size() * sizeof(Value));
  int depth = 1;
  for (const Value& v : items) depth = child_depth(v, depth);
  return Value(Rep(std::make_shared<ListData>(ListData{std::move(items), tuple, depth})));
}

int Value::depth() const {
  if (is_list()) return std::get<std::shared_ptr<ListData>>(rep_)->depth;
  if (is_dict()) return dict().depth;
  return 0;
}

bool Value::holds_changing_dict() const {
  if (is_list()) {
    for (const Value& v : items())
      if (v.holds_changing_dict()) return true;
  } else if (is_dict()) {
    if (dict().changes) return true;
    for (const auto& [k, v] : dict().items)
      if (v.holds_changing_dict()) return true;
  }
  return false;
}

Value Value::make_dict(std::vector<std::pair<std::string, Value>> items) {
  RenderBudget::charge(items.size() * 2 * sizeof(Value));
  auto d = std::make_shared<DictData>();
  for (auto& [k, v] : items) d->set(Value(std::move(k)), std::move(v));
  return Value(Rep(std::move(d)));
}

Value Value::make_namespace(std::vector<std::pair<std::string, Value>> items) {
  Value v = make_dict(std::move(items));
  v.mutable_dict().is_namespace = true;
  v.mutable_dict().changes = true;
  return v;
}

Value Value::function(Function f) { return Value(Rep(std::make_shared<Function>(std::move(f)))); }

int64_t Value::as_int() const { return is_bool() ? (as_bool() ? 1 : 0) : std::get<int64_t>(rep_); }

double Value::as_double() const {
  if (kind() == Kind::number) return std::get<double>(rep_);
  return static_cast<double>(as_int());
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::undefined:
    case Kind::none: return false;
    case Kind::boolean: return as_bool();
    case Kind::integer: return as_int() != 0;
    case Kind::number: return as_double() != 0.0;
    case Kind::string: return !str().empty();
    case Kind::list: return !items().empty();
    case Kind::dict: return dict().is_namespace || !dict().items.empty();
    case Kind::function: return true;
  }
  return false;
}

const char* Value::type_name() const {
  static const char* const names[] = {"Undefined", "NoneType", "bool", "int", "float", "str", "list", "dict", "function"};
  if (is_list() && is_tuple()) return "tuple";
  if (is_dict() && dict().is_namespace) return "Namespace";
  return names[static_cast<int>(kind())];
}

std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string s(buf, r.ptr);  // [-]d[.ddd]e±XX
  std::string sign;
  if (s[0] == '-') sign = "-", s.erase(0, 1);
  size_t e = s.find('e');
  int exp = std::stoi(s.substr(e + 1));
  std::string digits = s.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
  if (exp < -4 || exp >= 16) {
    std::string m = digits.substr(0, 1);
    if (digits.size() > 1) m += "." + digits.substr(1);
    char ex[16];
    std::snprintf(ex, sizeof ex, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    return sign + m + ex;
  }
  std::string out;
  if (exp < 0) {
    out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
  }
  return sign + out;
}

namespace {

std::string repr_string(const std::string& s) {
  char q = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == q) out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + q;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// json.dumps turns str, int, float, bool and None keys into strings.
std::string json_key(const Value& k) {
  switch (k.kind()) {
    case Value::Kind::string: return json_string(k.str());
    case Value::Kind::none: return "\"null\"";
    case Value::Kind::boolean: return k.as_bool() ? "\"true\"" : "\"false\"";
    case Value::Kind::integer: return json_string(std::to_string(k.as_int()));
    case Value::Kind::number: return json_string(float_repr(k.as_double()));
    default: throw Failure(std::string("keys must be str, int, float, bool or None, not ") + k.type_name());
  }
}

void to_json(const Value& v, int indent, int level, std::string& out) {
  if (out.size() > kMaxSize) throw Failure("the JSON text is too large");
  auto newline = [&](int lv) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * lv), ' ');
  };
  const char* item_sep = indent >= 0 ? "," : ", ";
  switch (v.kind()) {
    case Value::Kind::none: out += "null"; return;
    case Value::Kind::boolean: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::integer: out += std::to_string(v.as_int()); return;
    case Value::Kind::number: {
      double d = v.as_double();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : float_repr(d);
      return;
    }
    case Value::Kind::string: out += json_string(v.str()); return;
    case Value::Kind::list: {
      if (v.items().empty()) {
        out += "[]";
        return;
      }
      out += "[";
      for (size_t i = 0; i < v.items().size(); i++) {
        if (i) out += item_sep;
        newline(level + 1);
        to_json(v.items()[i], indent, level + 1, out);
      }
      newline(level);
      out += "]";
      return;
    }
    case Value::Kind::dict: {
      if (v.dict().is_namespace) throw Failure("Object of type Namespace is not JSON serializable");
      if (v.dict().items.empty()) {
        out += "{}";
        return;
      }
      out += "{";
      bool first = true;
      for (const auto& [k, x] : v.dict().items) {
        if (!first) out += item_sep;
        first = false;
        newline(level + 1);
        out += json_key(k) + ": ";
        to_json(x, indent, level + 1, out);
      }
      newline(level);
      out += "}";
      return;
    }
    default: throw Failure(std::string("Object of type ") + v.type_name() + " is not JSON serializable");
  }
}

}  // namespace

std::string Value::to_string() const {
  switch (kind()) {
    case Kind::undefined: return "";
    case Kind::string: return str();
    default: return repr();
  }
}

std::string Value::repr() const {
  switch (kind()) {
    case Kind::undefined: return "";
    case Kind::none: return "None";
    case Kind::boolean: return as_bool() ? "True" : "False";
    case Kind::integer: return std::to_string(as_int());
    case Kind::number: return float_repr(as_double());
    case Kind::string: return repr_string(str());
    case Kind::list: {
      std::string out = is_tuple() ? "(" : "[";
      for (size_t i = 0; i < items().size(); i++) {
        out += (i ? ", " : "") + items()[i].repr();
        if (out.size() > kMaxSize) throw Failure("the printed value is too large");
      }
      if (is_tuple() && items().size() == 1) out += ",";
      return out + (is_tuple() ? ")" : "]");
    }
    case Kind::dict: {
      std::string out = dict().is_namespace ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, v] : dict().items) {
        out += (first ? "" : ", ") + k.repr() + ": " + v.repr();
        first = false;
        if (out.size() > kMaxSize) throw Failure("the printed value is too large");
      }
      return out + (dict().is_namespace ? "}>" : "}");
    }
    case Kind::function: return "<function>";
  }
  return "";
}

std::string Value::to_json(int indent) const {
  std::string out;
  jinja::to_json(*this, indent, 0, out);
  return out;
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Value::Kind::number || b.kind() == Value::Kind::number) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none: return true;
    case Value::Kind::string: return a.str() == b.str();
    case Value::Kind::list: {
      if (a.items().size() != b.items().size()) return false;
      for (size_t i = 0; i < a.items().size(); i++)
        if (!equals(a.items()[i], b.items()[i])) return false;
      return true;
    }
    case Value::Kind::dict: {
      if (a.dict().is_namespace || b.dict().is_namespace) return &a.dict() == &b.dict();
      if (a.dict().items.size() != b.dict().items.size()) return false;
      for (const auto& [k, v] : a.dict().items) {
        const Value* o = b.dict().lookup(Value(k));
        if (!o || !equals(v, *o)) return false;
      }
      return true;
    }
    case Value::Kind::function: return &a.fn() == &b.fn();
    default: return false;
  }
}

bool less(const Value& a, const Value& b, bool& ok) {
  ok = true;
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Value::Kind::number || b.kind() == Value::Kind::number) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.str() < b.str();  // UTF-8 keeps code point order
  if (a.is_list() && b.is_list()) {
    const auto &x = a.items(), &y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); i++) {
      if (equals(x[i], y[i])) continue;
      return less(x[i], y[i], ok);
    }
    return x.size() < y.size();
  }
  ok = false;
  return false;
}

std::vector<std::string_view> code_points(std::string_view s) {
  std::vector<std::string_view> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    size_t j = 1;
    while (j < n && i + j < s.size() && (static_cast<unsigned char>(s[i + j]) & 0xC0) == 0x80) j++;
    if (j < n) n = 1;  // truncated or invalid: one byte
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

bool is_space(std::string_view cp) {
  if (cp.size() == 1) {
    auto c = static_cast<unsigned char>(cp[0]);
    return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  }
  uint32_t u = 0;
  if (cp.size() == 2) u = ((cp[0] & 0x1Fu) << 6) | (cp[1] & 0x3Fu);
  else if (cp.size() == 3) u = ((cp[0] & 0x0Fu) << 12) | ((cp[1] & 0x3Fu) << 6) | (cp[2] & 0x3Fu);
  else return false;
  return u == 0x85 || u == 0xA0 || u == 0x1680 || (u >= 0x2000 && u <= 0x200A) || u == 0x2028 || u == 0x2029 ||
         u == 0x202F || u == 0x205F || u == 0x3000;
}

}  // namespace qmm::llm::jinja
