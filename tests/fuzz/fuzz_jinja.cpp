// libFuzzer target of the Jinja interpreter (chat templates come from untrusted GGUF files):
// any input must parse and render, or throw qmm::Error — no crash, no sanitizer report, no
// hang (a step limit), no huge allocation. Seeds: the built-in templates (fuzz_make_seeds).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "text/jinja/template.h"

namespace {

using qmm::llm::jinja::Value;

Value variables() {
  auto msg = [](const char* role, const char* content) {
    return Value::make_dict({{"role", Value(role)}, {"content", Value(content)}});
  };
  return Value::make_dict({{"messages", Value::list({msg("system", "Be brief."), msg("user", "Hi é 東京"),
                                                     msg("assistant", " ok "), msg("user", "<think>x</think>y")})},
                           {"add_generation_prompt", Value(true)},
                           {"bos_token", Value("<s>")},
                           {"eos_token", Value("</s>")},
                           {"tools", Value::none()}});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Value vars = variables();
  qmm::llm::jinja::Options opt;
  opt.max_steps = 20000;
  try {
    qmm::llm::jinja::Template t(std::string_view(reinterpret_cast<const char*>(data), size), opt);
    (void)t.render(vars);
  } catch (const qmm::Error&) {
    // a clean error is an expected outcome
  }
  return 0;
}
