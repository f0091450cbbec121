// Python's str methods on UTF-8 strings, for Jinja's filters and method calls. Whitespace is
// Python's (str.isspace); case mapping is ASCII only (other characters are kept as they are).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "text/jinja/value.h"

namespace qmm::llm::jinja {

// str.strip/lstrip/rstrip(chars): `chars` none or undefined strips whitespace.
std::string py_strip(std::string_view s, const Value& chars, bool left, bool right);
// str.split(sep, maxsplit) / str.rsplit: sep none or undefined splits at whitespace runs.
std::vector<std::string> py_split(std::string_view s, const Value& sep, int64_t maxsplit, bool from_right);
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_capitalize(std::string_view s);
std::string py_title(std::string_view s);    // str.title()
std::string jinja_title(std::string_view s); // the `title` filter (words split at - space ( { [ <)
std::string py_replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count);
// A bound str method (startswith, split, …) as a callable; undefined when `name` is not one.
Value str_method(const std::string& s, const std::string& name);
// Number of code points.
size_t py_len(std::string_view s);

}  // namespace qmm::llm::jinja
