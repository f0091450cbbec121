// Jinja's filters, tests and globals, and the Python methods of str and dict that templates
// call, as the interpreter needs them. They throw Failure (the interpreter adds the line).
//   filters: abs attr capitalize count d default dictsort e escape first float int items join
//            last length list lower map max min reject rejectattr replace reverse round safe
//            select selectattr sort string sum title tojson trim unique upper
//   tests:   boolean callable defined divisibleby eq equalto even false float ge gt in integer
//            iterable le lower lt mapping ne none number odd sameas sequence string true
//            undefined upper (and ==, !=, <, <=, >, >=)
//   str:     capitalize count endswith find format isalnum isalpha isdigit islower isspace
//            isupper join lower lstrip replace rfind rsplit rstrip split splitlines startswith
//            strip title upper
//   dict:    get items keys values
//   globals: dict namespace range raise_exception strftime_now
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>

#include "text/jinja/value.h"

namespace qmm::llm::jinja {

Value apply_filter(const std::string& name, const Value& subject, CallArgs& args);
bool apply_test(const std::string& name, const Value& subject, CallArgs& args);
// obj.name: a dict key, a bound str/dict method, or undefined.
Value get_attr(const Value& obj, const std::string& name);
// obj[key]: list/str index (negative from the end), dict key; undefined when absent.
Value get_item(const Value& obj, const Value& key);
// Python's obj[start:stop:step] on a list or str (absent parts undefined).
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
// The items a for loop visits: list items, dict keys, str code points; none for undefined.
std::vector<Value> iterate(const Value& v);
// The global `name` (range, namespace, …), or undefined.
Value builtin_global(const std::string& name);

// strftime(fmt) of the local time at `t` (strftime_now's clock).
std::string strftime_at(long long t, const std::string& fmt);

// Whether the parser should accept `| name` / `is name`.
bool has_filter(const std::string& name);
bool has_test(const std::string& name);

// Argument `i` of a call, or its keyword `name`, or `def`.
Value arg(const CallArgs& a, size_t i, std::string_view name, Value def = Value());
// Fails unless the call has at most `max_pos` positional arguments and only keywords in `names`.
void check_args(const CallArgs& a, size_t max_pos, std::initializer_list<std::string_view> names,
                const std::string& what);
// An int argument (bool allowed), or a Failure naming `what`.
int64_t int_arg(const Value& v, const std::string& what);


}  // namespace qmm::llm::jinja
