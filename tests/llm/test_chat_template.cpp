// Chat templates against an independent oracle (python3-jinja2, set up as transformers does):
// (a) every published template in ../shared/templates (and alt/) renders the same bytes in qmm
//     as in jinja2, errors included, over many conversations;
// (b) each built-in template renders what its model family's published template renders.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "jinja_oracle.h"
#include "text/chat_template.h"
#include "text/jinja/builtins.h"

namespace qmm::test {
namespace {

using llm::ChatMessage;
using llm::jinja::Value;
namespace fs = std::filesystem;

constexpr std::time_t kNow = 1795000000;  // a fixed clock for strftime_now (Nov 2026)

struct Conversation {
  std::vector<ChatMessage> messages;
  bool add_generation_prompt;
  std::string label;
};

// System prompt absent / plain / unicode; 1–5 user turns; ends with the user (generation
// prompt on and off) or with the assistant. Contents cycle through unicode, quotes, newlines,
// surrounding whitespace and Jinja-looking text.
std::vector<Conversation> conversations() {
  const std::vector<std::string> systems = {"", "You are a helpful assistant.",
                                            "  Réponds en français, s'il te plaît.\nSois \"bref\" 🙂 "};
  const std::vector<std::string> users = {
      "What is the capital of the United States?",
      "Café, naïve, Zürich — 東京の天気は？ 🌧️🎉",
      "He said \"hi\" and 'bye'\nthen left.\n\n  Indented line\twith tab",
      "  padded question?  \n",
      "{{ not a tag }} {% neither %} \\n backslash",
  };
  const std::vector<std::string> replies = {
      "Washington, D.C.", "ありがとう! 😀", "Line one\nLine two\n", "  spaced answer  ", "Ελληνικά и русский",
  };
  std::vector<Conversation> out;
  for (size_t s = 0; s < systems.size(); s++)
    for (int turns = 1; turns <= 5; turns++)
      for (int ending = 0; ending < 3; ending++) {  // 0: user + prompt, 1: user, 2: assistant
        Conversation c;
        if (!systems[s].empty()) c.messages.push_back({"system", systems[s]});
        for (int t = 0; t < turns; t++) {
          c.messages.push_back({"user", users[static_cast<size_t>(t + static_cast<int>(s)) % users.size()]});
          if (t + 1 < turns || ending == 2) c.messages.push_back({"assistant", replies[static_cast<size_t>(t) % replies.size()]});
        }
        c.add_generation_prompt = ending == 0;
        c.label = "system " + std::to_string(s) + ", " + std::to_string(turns) + " turns, ending " + std::to_string(ending);
        out.push_back(std::move(c));
      }
  return out;
}

Value chat_vars(const Conversation& c, const std::string& bos, const std::string& eos) {
  std::vector<Value> msgs;
  for (const auto& m : c.messages) msgs.push_back(Value::make_dict({{"role", Value(m.role)}, {"content", Value(m.content)}}));
  return Value::make_dict({{"messages", Value::list(std::move(msgs))},
                           {"add_generation_prompt", Value(c.add_generation_prompt)},
                           {"bos_token", Value(bos)},
                           {"eos_token", Value(eos)},
                           {"tools", Value::none()}});
}

// BOS and EOS of a published template's model, by file name (see ../shared/templates/SOURCES.md).
std::pair<std::string, std::string> tokens_for(const std::string& file) {
  if (file.rfind("llama3", 0) == 0) return {"<|begin_of_text|>", "<|eot_id|>"};
  if (file.rfind("qwen", 0) == 0) return {"", "<|im_end|>"};
  if (file.rfind("gemma", 0) == 0) return {"<bos>", "<eos>"};
  if (file.rfind("phi3", 0) == 0) return {"<s>", "<|endoftext|>"};
  if (file.rfind("smollm", 0) == 0) return {"<|im_start|>", "<|im_end|>"};
  return {"<s>", "</s>"};  // llama2, mistral
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Published {
  std::string name;  // file name relative to the templates folder
  std::string source;
};

std::vector<Published> published_templates() {
  std::vector<Published> out;
  const fs::path dir = QMM_TEMPLATES_DIR;
  for (const fs::path& sub : {fs::path(), fs::path("alt")}) {
    std::error_code ec;
    if (!fs::is_directory(dir / sub, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir / sub))
      if (e.path().extension() == ".jinja")
        out.push_back({(sub / e.path().filename()).string(), read_file(e.path())});
  }
  std::sort(out.begin(), out.end(), [](const Published& a, const Published& b) { return a.name < b.name; });
  return out;
}

// qmm's rendering, or "ERR …" when it throws.
std::pair<bool, std::string> qmm_render(const std::string& source, const Conversation& c, const std::string& bos,
                                        const std::string& eos) {
  try {
    return {true, llm::render_chat(source, c.messages, c.add_generation_prompt, bos, eos, kNow)};
  } catch (const Error& e) {
    return {false, e.what()};
  }
}

// Every template renders every conversation to the same bytes in qmm and in jinja2 (or fails in
// both); returns false (with `why`) when jinja2 cannot run.
bool expect_same_as_jinja2(const std::vector<Published>& templates, std::string& why) {
  auto convs = conversations();
  std::vector<OracleCase> cases;
  for (const auto& t : templates) {
    auto [bos, eos] = tokens_for(fs::path(t.name).filename().string());
    for (const auto& c : convs) cases.push_back({t.source, chat_vars(c, bos, eos)});
  }
  auto expected = run_oracle(cases, kNow, why);
  if (!expected) return false;
  size_t i = 0, rendered = 0, errors = 0;
  for (const auto& t : templates) {
    auto [bos, eos] = tokens_for(fs::path(t.name).filename().string());
    for (const auto& c : convs) {
      const OracleResult& want = (*expected)[i++];
      auto [ok, got] = qmm_render(t.source, c, bos, eos);
      EXPECT_EQ(ok, want.ok) << t.name << ", " << c.label << "\nqmm: " << got << "\njinja2: " << want.text;
      if (ok && want.ok) {
        EXPECT_EQ(got, want.text) << t.name << ", " << c.label;
      }
      (ok ? rendered : errors)++;
    }
  }
  std::printf("%zu templates x %zu conversations: %zu renderings compared, %zu errors\n", templates.size(),
              convs.size(), rendered, errors);
  EXPECT_GT(rendered, errors);
  return true;
}

TEST(ChatTemplate, PublishedTemplatesMatchJinja2) {
  auto templates = published_templates();
  if (templates.empty()) GTEST_SKIP() << "no templates in " << QMM_TEMPLATES_DIR;
  std::string why;
  if (!expect_same_as_jinja2(templates, why)) GTEST_SKIP() << why;
}

// The built-ins use nothing that only qmm's interpreter accepts.
TEST(ChatTemplate, BuiltinsRenderTheSameInJinja2) {
  std::vector<Published> builtins;
  for (const auto& n : llm::builtin_chat_template_names()) builtins.push_back({n, *llm::builtin_chat_template(n)});
  std::string why;
  if (!expect_same_as_jinja2(builtins, why)) GTEST_SKIP() << why;
}

// Built-in template -> the published template(s) it must agree with, and on which conversations.
struct Pairing {
  const char* builtin;
  const char* published;
  bool (*applies)(const Conversation&);
};

bool always(const Conversation&) { return true; }
bool has_system(const Conversation& c) { return c.messages.front().role == "system"; }
bool ends_with_user(const Conversation& c) { return c.messages.back().role == "user"; }

TEST(ChatTemplate, BuiltinsMatchPublishedTemplates) {
  const Pairing pairings[] = {
      {"llama3", "llama3.jinja", always},        {"llama2", "llama2.jinja", always},
      {"mistral", "mistral-v3.jinja", always},   {"gemma", "gemma3.jinja", always},
      {"phi3", "phi3.jinja", always},            {"chatml", "qwen2.5.jinja", has_system},
      {"chatml", "smollm2.jinja", has_system},   {"chatml", "qwen3.jinja", ends_with_user},
  };
  const fs::path dir = QMM_TEMPLATES_DIR;
  std::vector<OracleCase> cases;
  struct Check {
    std::string builtin, published;
    const Conversation* conv;
  };
  std::vector<Check> checks;
  auto convs = conversations();
  for (const auto& p : pairings) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / p.published, ec)) continue;
    std::string source = read_file(dir / p.published);
    auto [bos, eos] = tokens_for(p.published);
    for (const auto& c : convs)
      if (p.applies(c)) {
        cases.push_back({source, chat_vars(c, bos, eos)});
        checks.push_back({p.builtin, p.published, &c});
      }
  }
  if (cases.empty()) GTEST_SKIP() << "no templates in " << QMM_TEMPLATES_DIR;
  std::string why;
  auto expected = run_oracle(cases, kNow, why);
  if (!expected) GTEST_SKIP() << why;
  for (size_t i = 0; i < checks.size(); i++) {
    const auto& ch = checks[i];
    auto [bos, eos] = tokens_for(ch.published);
    auto [ok, got] = qmm_render(*llm::builtin_chat_template(ch.builtin), *ch.conv, bos, eos);
    ASSERT_TRUE((*expected)[i].ok) << ch.published << " fails on " << ch.conv->label << ": " << (*expected)[i].text;
    ASSERT_TRUE(ok) << ch.builtin << ", " << ch.conv->label << ": " << got;
    EXPECT_EQ(got, (*expected)[i].text) << ch.builtin << " vs " << ch.published << ", " << ch.conv->label;
  }
  std::printf("%zu built-in renderings equal to the published templates' in jinja2\n", checks.size());
}

TEST(ChatTemplate, BuiltinNames) {
  auto names = llm::builtin_chat_template_names();
  EXPECT_EQ(names, (std::vector<std::string>{"llama3", "llama2", "mistral", "chatml", "gemma", "phi3"}));
  for (const auto& n : names) {
    ASSERT_TRUE(llm::builtin_chat_template(n).has_value()) << n;
    EXPECT_EQ(llm::resolve_chat_template(n), *llm::builtin_chat_template(n));
  }
  EXPECT_FALSE(llm::builtin_chat_template("llama4").has_value());
}

TEST(ChatTemplate, BuiltinChatML) {
  std::vector<ChatMessage> m = {{"system", "S"}, {"user", "Hi"}};
  EXPECT_EQ(llm::render_chat(*llm::builtin_chat_template("chatml"), m, true, "", ""),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(llm::render_chat(*llm::builtin_chat_template("phi3"), m, false, "<s>", "<|endoftext|>"),
            "<|system|>\nS<|end|>\n<|user|>\nHi<|end|>\n<|endoftext|>");
}

TEST(ChatTemplate, Llama3UsesTheClock) {
  std::vector<ChatMessage> m = {{"user", " Hi "}};
  EXPECT_EQ(llm::render_chat(*llm::builtin_chat_template("llama3"), m, true, "<|begin_of_text|>", "<|eot_id|>", kNow),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
            "Today Date: " + llm::jinja::strftime_at(kNow, "%d %b %Y") +
                "\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, AlternationErrors) {
  std::vector<ChatMessage> m = {{"user", "a"}, {"user", "b"}};
  for (const char* name : {"llama2", "mistral", "gemma"}) {
    try {
      llm::render_chat(*llm::builtin_chat_template(name), m, true, "<s>", "</s>");
      ADD_FAILURE() << name << " accepted two user turns in a row";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("roles must alternate"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("template line ", 0), 0u) << e.what();
    }
  }
}

TEST(ChatTemplate, ResolveFileAndErrors) {
  const fs::path file = fs::temp_directory_path() / "qmm_test_template.jinja";
  std::ofstream(file) << "{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}";
  std::string src = llm::resolve_chat_template(file.string());
  EXPECT_EQ(llm::render_chat(src, {{"user", "x"}}, false, "", ""), "[user:x]");

  std::ofstream(file) << "line one\n{% if x %}never closed";
  try {
    llm::resolve_chat_template(file.string());
    ADD_FAILURE() << "a broken template file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("template line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("endif"), std::string::npos) << e.what();
  }
  fs::remove(file);
  try {
    llm::resolve_chat_template("no-such-template");
    ADD_FAILURE() << "an unknown name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--chat-template"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("llama3, llama2, mistral, chatml, gemma, phi3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(llm::resolve_chat_template(fs::temp_directory_path().string()), Error);  // a directory
}

}  // namespace
}  // namespace qmm::test
