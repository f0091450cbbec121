// Values of the Jinja interpreter, with Python's semantics where templates can see them:
// undefined (Jinja's default Undefined: renders empty, is falsy, iterates as nothing, but
// arithmetic or attribute access on it is an error), None, bool, int (int64), float, str
// (UTF-8 bytes; length, indexing and slicing count code points), list/tuple, dict (insertion
// ordered), namespace (a dict that `set ns.x = …` may change) and callables.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace qmm::llm::jinja {

class Value;

// An error of a template's evaluation; the interpreter adds the line ("template line N: …").
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Limits that keep a bad template from exhausting memory or the stack: the size of one string
// or printed value, the bytes of strings and lists one render may create in all, and how deep
// lists and dicts nest.
constexpr size_t kMaxSize = size_t{64} << 20;
constexpr int kMaxValueDepth = 200;

// Counts the bytes of the strings and lists a render creates (Template::render installs one
// for its thread); more than `limit` is a Failure. No counting outside a render.
class RenderBudget {
 public:
  explicit RenderBudget(size_t limit);
  ~RenderBudget();
  RenderBudget(const RenderBudget&) = delete;
  RenderBudget& operator=(const RenderBudget&) = delete;
  static void charge(size_t bytes);

 private:
  size_t limit_, used_ = 0;
  RenderBudget* outer_;
};

struct ListData {
  std::vector<Value> items;
  bool tuple = false;  // prints as (a, b)
  int depth = 1;       // nesting of lists and dicts, this one included
};

// A dict's keys are str, int, float, bool, None or tuples of them (Python's hashable values);
// 1, 1.0 and True are the same key, as in Python.
struct DictData {
  std::vector<std::pair<Value, Value>> items;
  bool is_namespace = false;
  bool changes = false;  // a namespace or a loop object: its items change after creation
  int depth = 1;         // as ListData's (set() keeps it up to date, never lowering it)
  const Value* find(std::string_view key) const;  // a str key
  const Value* lookup(const Value& key) const;
  void set(Value key, Value v);
};

// Arguments of a call: positional, then keyword.
struct CallArgs {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
};
using Function = std::function<Value(CallArgs&)>;

struct Undefined {
  std::string message;  // what using it says: "'x' is undefined"
};

class Value {
 public:
  enum class Kind { undefined, none, boolean, integer, number, string, list, dict, function };

  Value() = default;  // undefined
  static Value undefined(std::string message) { return Value(Rep(Undefined{std::move(message)})); }
  static Value none() { return Value(Rep(nullptr)); }
  Value(bool b) : rep_(b) {}
  Value(int v) : rep_(static_cast<int64_t>(v)) {}
  Value(int64_t v) : rep_(v) {}
  Value(double v) : rep_(v) {}
  Value(std::string s);
  Value(const char* s) : Value(std::string(s)) {}
  Value(std::string_view s) : Value(std::string(s)) {}
  static Value list(std::vector<Value> items, bool tuple = false);
  static Value make_dict(std::vector<std::pair<std::string, Value>> items = {});
  static Value make_namespace(std::vector<std::pair<std::string, Value>> items = {});
  static Value function(Function f);

  Kind kind() const { return static_cast<Kind>(rep_.index()); }
  bool is_undefined() const { return kind() == Kind::undefined; }
  bool is_none() const { return kind() == Kind::none; }
  bool is_bool() const { return kind() == Kind::boolean; }
  bool is_int() const { return kind() == Kind::integer; }  // not bool
  bool is_number() const { return kind() == Kind::integer || kind() == Kind::number || kind() == Kind::boolean; }
  bool is_string() const { return kind() == Kind::string; }
  bool is_list() const { return kind() == Kind::list; }
  bool is_dict() const { return kind() == Kind::dict; }
  bool is_function() const { return kind() == Kind::function; }

  bool as_bool() const { return std::get<bool>(rep_); }
  int64_t as_int() const;   // bool or int
  double as_double() const; // bool, int or float
  const std::string& str() const { return *std::get<std::shared_ptr<const std::string>>(rep_); }
  const std::vector<Value>& items() const { return std::get<std::shared_ptr<ListData>>(rep_)->items; }
  bool is_tuple() const { return std::get<std::shared_ptr<ListData>>(rep_)->tuple; }
  const DictData& dict() const { return *std::get<std::shared_ptr<DictData>>(rep_); }
  DictData& mutable_dict() const { return *std::get<std::shared_ptr<DictData>>(rep_); }
  const Function& fn() const { return *std::get<std::shared_ptr<Function>>(rep_); }
  const std::string& undefined_message() const { return std::get<Undefined>(rep_).message; }
  int depth() const;  // 0 for scalars
  // Whether this value is or holds a namespace or loop object (which may not be stored in a
  // namespace: that could make a cycle).
  bool holds_changing_dict() const;

  bool truthy() const;            // Python's bool()
  std::string to_string() const;  // Python's str(), as {{ x }} prints it ("" for undefined)
  std::string repr() const;       // Python's repr()
  // json.dumps(ensure_ascii=False) with separators (", ", ": "), or ("," , ": ") and a newline
  // and `indent` spaces per level when indent >= 0 (as transformers' tojson filter).
  std::string to_json(int indent = -1) const;
  const char* type_name() const;  // Python's type name, for errors

 private:
  // Strings, lists and dicts are shared (values are copied often; only namespaces change).
  using Rep = std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::shared_ptr<const std::string>,
                           std::shared_ptr<ListData>,
                           std::shared_ptr<DictData>, std::shared_ptr<Function>>;
  explicit Value(Rep r) : rep_(std::move(r)) {}
  Rep rep_;
};

// Python's ==: 1 == 1.0 == True, lists and dicts compared element by element.
bool equals(const Value& a, const Value& b);
// Python's <, for numbers, strings and lists; false with ok = false for other types.
bool less(const Value& a, const Value& b, bool& ok);

// UTF-8 helpers: code points of a string and back (invalid bytes count as one code point).
std::vector<std::string_view> code_points(std::string_view s);
// Python's str.isspace() for one UTF-8 code point.
bool is_space(std::string_view cp);
// Python float repr ("1.0", "0.1", "1e+16").
std::string float_repr(double v);

}  // namespace qmm::llm::jinja
