// A small Jinja interpreter for chat templates: what the templates of popular GGUF models use,
// with the settings Hugging Face transformers renders them with (trim_blocks and lstrip_blocks
// on, the loopcontrols extension, `tojson` as json.dumps(ensure_ascii=False), the globals
// raise_exception and strftime_now), so the bytes match transformers' apply_chat_template.
//
// Supported: {{ }}, {# #}, whitespace control (- and +), {% raw %}, {% if/elif/else %},
// {% for %} (loop.*, `if` filter, else, tuple unpacking), {% break/continue %}, {% set %}
// (names, tuples, ns.attr, block set), {% macro %}, {% generation %}; the expressions, filters,
// tests, string/dict methods and globals listed in builtins.h. Anything else is a qmm::Error
// "template line N: …", at parse time for syntax and at render time for evaluation errors.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/jinja/value.h"

namespace qmm::llm::jinja {

struct Node;

struct Options {
  bool trim_blocks = true;    // drop the first newline after a block tag (as transformers)
  bool lstrip_blocks = true;  // drop spaces and tabs before a block tag on its line (as transformers)
  int64_t max_steps = 5'000'000;          // statements, expressions and loop iterations per render
  size_t max_bytes = size_t{512} << 20;  // bytes of strings and lists created per render
};

class Template {
 public:
  explicit Template(std::string_view source, const Options& opt = {});
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // Renders with `globals` (a dict: the template's variables; they shadow the built-in globals).
  std::string render(const Value& globals) const;

 private:
  std::unique_ptr<std::vector<std::unique_ptr<Node>>> body_;
  int64_t max_steps_;
  size_t max_bytes_;
};

}  // namespace qmm::llm::jinja
