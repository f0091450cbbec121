// Generated deep and wide templates (issue 22): every recursive path of the interpreter —
// parsing, evaluation, destruction of the parsed tree — is bounded, so a hostile template is
// a one-line "template line N: …" error, never a stack overflow; wide templates (many
// siblings) are not limited by the depth bounds.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/error.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "text/chat.h"
#include "text/jinja/template.h"
#include "text/tokenizer.h"

namespace qmm::test {
namespace {

using llm::jinja::Template;
using llm::jinja::Value;

Value globals() {
  Value d = Value(1);  // d.a.a… 30 levels deep
  for (int i = 0; i < 30; i++) d = Value::make_dict({{"a", d}});
  // f()()… is f
  static const auto self = std::make_shared<Value>();
  *self = Value::function([w = std::weak_ptr<Value>(self)](llm::jinja::CallArgs&) { return *w.lock(); });
  return Value::make_dict({{"x", Value("x")}, {"d", d}, {"l", Value::list({Value(1)})}, {"f", *self}});
}

// Renders `src`: the output, or the error's message.
std::string outcome(const std::string& src) {
  try {
    return Template(src).render(globals());
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}

std::string repeat(const std::string& s, int n) {
  std::string r;
  for (int i = 0; i < n; i++) r += s;
  return r;
}

// A family of expressions that nest one level per repetition, without parentheses.
struct Chain {
  const char* name;
  std::string (*make)(int n);
};

const Chain kChains[] = {
    {"concat", [](int n) { return "{{ 1" + repeat(" ~ 1", n) + " }}"; }},
    {"plus", [](int n) { return "{{ 1" + repeat(" + 1", n) + " }}"; }},
    {"times", [](int n) { return "{{ 1" + repeat(" * 1", n) + " }}"; }},
    {"power", [](int n) { return "{{ 1" + repeat(" ** 1", n) + " }}"; }},
    {"and", [](int n) { return "{{ true" + repeat(" and true", n) + " }}"; }},
    {"or", [](int n) { return "{{ false" + repeat(" or false", n) + " }}"; }},
    {"filters", [](int n) { return "{{ x" + repeat(" | string", n) + " }}"; }},
    {"attributes", [](int n) { return "{{ d" + repeat(".a", n) + " is defined }}"; }},
    {"indexes", [](int n) { return "{{ d" + repeat("['a']", n) + " is defined }}"; }},
    {"slices", [](int n) { return "{{ l" + repeat("[:]", n) + " }}"; }},
    {"calls", [](int n) { return "{{ f" + repeat("()", n) + " is defined }}"; }},
    {"if-else", [](int n) { return "{{ 1" + repeat(" if false else 1", n) + " }}"; }},
    {"not", [](int n) { return "{{ " + repeat("not ", n) + "1 }}"; }},
    {"minus", [](int n) { return "{{ " + repeat("- ", n) + "1 }}"; }},
    {"tests", [](int n) { return "{{ x is defined" + repeat(" and x is string", n) + " }}"; }},
    {"ifs", [](int n) { return repeat("{% if true %}", n) + "y" + repeat("{% endif %}", n); }},
    {"fors", [](int n) { return repeat("{% for i in [1] %}", n) + "y" + repeat("{% endfor %}", n); }},
    {"parentheses", [](int n) { return "{{ " + repeat("(", n) + "1" + repeat(")", n) + " }}"; }},
    {"lists", [](int n) { return "{{ " + repeat("[", n) + "1" + repeat("]", n) + " | length }}"; }},
};

// Shallow chains render; deep ones (40000 levels, as in the issue) are an error that says so.
TEST(JinjaBounds, DeepChainsAreErrors) {
  for (const Chain& c : kChains) {
    std::string shallow = outcome(c.make(20));
    EXPECT_EQ(shallow.find("error"), std::string::npos) << c.name << ": " << shallow;
    std::string deep = outcome(c.make(40000));
    EXPECT_NE(deep.find("error: template line 1: "), std::string::npos) << c.name << ": " << deep.substr(0, 200);
    EXPECT_NE(deep.find("nested too deeply"), std::string::npos) << c.name << ": " << deep.substr(0, 200);
  }
}

// A 1 MB expression that is never evaluated is refused at parse time (destroying its tree
// would recurse as deeply as evaluating it).
TEST(JinjaBounds, DeepExpressionNeverEvaluated) {
  std::string src = "{% if false %}{{ 1" + repeat("~1", 500000) + " }}{% endif %}";
  std::string r = outcome(src);
  EXPECT_NE(r.find("nested too deeply"), std::string::npos) << r.substr(0, 200);
}

// A macro calling itself from deep inside its body: each call is within the parser's bounds,
// the calls together are bounded at run time.
TEST(JinjaBounds, DeepMacroRecursion) {
  std::string body = repeat("{% if true %}", 150) + "{{ m(k - 1) if k > 0 else 'end' }}" + repeat("{% endif %}", 150);
  std::string r = outcome("{% macro m(k) %}" + body + "{% endmacro %}{{ m(60) }}");
  EXPECT_NE(r.find("nests too deeply"), std::string::npos) << r.substr(0, 200);
  EXPECT_EQ(outcome("{% macro m(k) %}" + body + "{% endmacro %}{{ m(3) }}"), "end");
}

// Wide templates: many siblings cost time and memory in proportion, with no depth error.
TEST(JinjaBounds, WideTemplatesRender) {
  const int n = 20000;
  EXPECT_EQ(outcome("{{ [" + repeat("1, ", n) + "1] | length }}"), std::to_string(n + 1));
  EXPECT_EQ(outcome("{{ {" + repeat("'k': 1, ", n) + "'k': 2} | length }}"), "1");
  EXPECT_EQ(outcome("{{ f(" + repeat("1, ", n) + "1) is defined }}"), "True");
  EXPECT_EQ(outcome("{{ 1" + repeat(" == 1", n) + " }}"), "True");
  EXPECT_EQ(outcome(repeat("{% if true %}a{% endif %}", n)), std::string(n, 'a'));
  EXPECT_EQ(outcome(repeat("{{ 'b' }}", n)), std::string(n, 'b'));
}

// Integer overflow in filters and loops is an error or, where Python ends the sequence, the end.
TEST(JinjaBounds, IntegerOverflow) {
  EXPECT_EQ(outcome("{{ [9223372036854775807, 1] | sum }}"), "error: template line 1: filter 'sum': integer overflow");
  EXPECT_EQ(outcome("{{ [1] | sum(start=-9223372036854775807 - 1 + 0) + 0 }}"), "-9223372036854775807");
  EXPECT_EQ(outcome("{{ (-9223372036854775807 - 1) | abs }}"), "error: template line 1: abs(): integer overflow");
  EXPECT_EQ(outcome("{{ [1, 2, 3][1::9223372036854775807] }}"), "[2]");
  EXPECT_EQ(outcome("{{ [1, 2, 3][::-9223372036854775807] }}"), "[3]");
  EXPECT_EQ(outcome("{{ 'abc'[2::9223372036854775807] }}"), "c");
  EXPECT_EQ(outcome("{{ range(0, 9223372036854775807, 4611686018427387904) | list }}"), "[0, 4611686018427387904]");
  EXPECT_EQ(outcome("{{ range(0, -9223372036854775807, -4611686018427387904) | list | length }}"), "2");
  EXPECT_EQ(outcome("{{ l | map(attribute='99999999999999999999') | list | length }}"), "1");
}

// A GGUF's own chat template has the limit of --chat-template FILE (1 MiB).
TEST(JinjaBounds, ModelTemplateSizeLimit) {
  const std::string path = (std::filesystem::temp_directory_path() / "qmm_big_template.gguf").string();
  const llm::Tokenizer tok = llm::Tokenizer::spm({"<unk>", "<s>", "</s>", "a"}, {}, {}, 1, 2);
  for (const size_t size : {size_t{1000}, llm::kMaxChatTemplateBytes + 1}) {
    gguf::Writer w;
    w.set_string("tokenizer.chat_template", std::string(size, 'x'));
    w.write(path);
    const gguf::File f = gguf::File::open(path);
    try {
      EXPECT_EQ(llm::ChatFormat::from_model(f, tok, "").template_source.size(), size);
      EXPECT_LE(size, llm::kMaxChatTemplateBytes);
    } catch (const Error& e) {
      EXPECT_GT(size, llm::kMaxChatTemplateBytes) << e.what();
      EXPECT_NE(std::string(e.what()).find("is larger than 1 MiB"), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace qmm::test
