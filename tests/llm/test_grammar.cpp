// GBNF grammars: parsing (and its bounds against hostile grammars), the matcher over code
// points and partial UTF-8, the vocabulary trie against a token-by-token check, and the
// constrained sampler.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <random>
#include <string>

#include "core/error.h"
#include "llm/generate.h"
#include "llm/grammar_filter.h"
#include "llm/sampler.h"
#include "text/grammar.h"
#include "text/grammar_vocab.h"
#include "test_models.h"

namespace qmm::llm {
namespace {

bool matches(const std::string& gbnf, const std::string& text) {
  GrammarMatcher m(Grammar::parse(gbnf));
  return m.accept(text) && m.complete();
}

std::string parse_error(const std::string& gbnf, const GrammarLimits& lim = {}) {
  try {
    Grammar::parse(gbnf, lim);
  } catch (const Error& e) {
    return e.what();
  }
  return "(parsed)";
}

TEST(Grammar, LiteralsClassesAndRepetitions) {
  EXPECT_TRUE(matches(R"(root ::= "yes" | "no")", "yes"));
  EXPECT_FALSE(matches(R"(root ::= "yes" | "no")", "maybe"));
  EXPECT_TRUE(matches(R"(root ::= [a-c]+ "!")", "abcab!"));
  EXPECT_FALSE(matches(R"(root ::= [a-c]+ "!")", "!"));
  EXPECT_TRUE(matches(R"(root ::= [^x]* "x")", "héllo x"));
  EXPECT_TRUE(matches(R"(root ::= "a"{2,3})", "aaa"));
  EXPECT_FALSE(matches(R"(root ::= "a"{2,3})", "aaaa"));
  EXPECT_FALSE(matches(R"(root ::= "a"{2,3})", "a"));
  EXPECT_TRUE(matches(R"(root ::= ("ab")? "c")", "abc"));
  EXPECT_TRUE(matches(R"(root ::= ("ab")? "c")", "c"));
  EXPECT_TRUE(matches(R"(root ::= "x"{2,} )", "xxxxx"));
  EXPECT_TRUE(matches("root ::= \"\\x41\\u00e9\\n\" . # comment\n", "Aé\n😀"));
  // Rules on several lines, a reference before its definition, newlines inside groups.
  EXPECT_TRUE(matches("root ::=\n  item (\n  \",\" item)*\n  | \"none\"\nitem ::= [0-9]+\n", "1,22,333"));
  EXPECT_TRUE(matches("root ::= \"a\"\n  | \"b\"\n", "b"));
}

TEST(Grammar, MatcherStatesAndUtf8) {
  GrammarMatcher m(Grammar::parse(R"(root ::= "é" [0-9])"));
  EXPECT_FALSE(m.complete());
  EXPECT_TRUE(m.accept("\xC3"));  // the first byte of é: it waits
  EXPECT_EQ(m.pending(), "\xC3");
  EXPECT_FALSE(m.allows("\xA8"));  // è
  EXPECT_TRUE(m.accept("\xA9" "7"));
  EXPECT_TRUE(m.done());
  EXPECT_FALSE(m.accept("1"));
  GrammarMatcher bad(Grammar::parse(R"(root ::= [a-z]*)"));
  EXPECT_FALSE(bad.accept("\xFF"));  // not UTF-8
  EXPECT_FALSE(bad.accept("\xE2\x82"));  // the start of €, which [a-z] cannot be
  EXPECT_TRUE(bad.complete());
}

TEST(Grammar, JsonLikeNesting) {
  const std::string g = R"(
root   ::= value
value  ::= object | array | string | [0-9]+ | "true" | "false" | "null"
object ::= "{" ws ( string ":" ws value ws ("," ws string ":" ws value ws)* )? "}"
array  ::= "[" ws ( value ws ("," ws value ws)* )? "]"
string ::= "\"" ( [^"\\] | "\\" ["\\/bfnrt] )* "\""
ws     ::= [ \t\n]*
)";
  EXPECT_TRUE(matches(g, R"({"a": [1, 2, {"b": "x\"y"}], "c": null})"));
  EXPECT_FALSE(matches(g, R"({"a": [1, 2})"));
  EXPECT_TRUE(matches(g, std::string(500, '[') + std::string(500, ']')));
}

TEST(Grammar, BadGrammarsAreOneLineErrors) {
  EXPECT_NE(parse_error(R"(item ::= "a")").find("no 'root' rule"), std::string::npos);
  EXPECT_NE(parse_error(R"(root ::= item)").find("'item' is used but not defined"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"\nroot ::= \"b\"").find("defined twice"), std::string::npos);
  EXPECT_NE(parse_error(R"(root ::= "abc)").find("unterminated"), std::string::npos);
  EXPECT_NE(parse_error(R"(root ::= [z-a])").find("end before its start"), std::string::npos);
  EXPECT_NE(parse_error(R"(root ::= * "a")").find("follows nothing"), std::string::npos);
  EXPECT_NE(parse_error(R"(root ::= "\q")").find("unknown escape"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"\n\nx y").find("grammar line 3"), std::string::npos);
  EXPECT_NE(parse_error(R"(root ::= ("a")
)" "x ::= ((").find("expected"), std::string::npos);
}

TEST(Grammar, LeftRecursionIsRefused) {
  EXPECT_NE(parse_error(R"(root ::= root "a" | "b")").find("'root' is left-recursive"), std::string::npos);
  EXPECT_NE(parse_error("root ::= x\nx ::= e y\ne ::= \"\" | \"q\"\ny ::= x \"a\"").find("left-recursive"),
            std::string::npos);
  EXPECT_EQ(parse_error(R"(root ::= "a" root | "b")"), "(parsed)");  // right recursion is fine
}

TEST(Grammar, ExplosionsAreBounded) {
  // Repetitions nested to a billion elements stop at the element limit.
  EXPECT_NE(parse_error("root ::= (\"" + std::string(1000, 'a') + "\"{5000})").find("more than"), std::string::npos);
  // Nested groups repeat references, not copies: a^(10^12) is four rules.
  GrammarMatcher deep(Grammar::parse(R"(root ::= (((("a"{1000}){1000}){1000}){1000}))"));
  EXPECT_TRUE(deep.accept(std::string(5000, 'a')));
  EXPECT_NE(parse_error(R"(root ::= "a"{99999999})").find("repetition count"), std::string::npos);
  EXPECT_NE(parse_error("root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')')).find("nested deeper"),
            std::string::npos);
  GrammarLimits small;
  small.max_bytes = 10;
  EXPECT_NE(parse_error(R"(root ::= "aaaaaaaa")", small).find("larger than 10 bytes"), std::string::npos);
  // 2^40 ways to reach the first character: the expansion budget refuses it quickly.
  std::string g = "root ::= r0\n";
  for (int i = 0; i < 40; ++i) {
    const std::string a = std::to_string(i), b = std::to_string(i + 1);
    g.append("r").append(a).append(" ::= r").append(b).append(" | r").append(b).append("\n");
  }
  g += "r40 ::= \"a\"\n";
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(parse_error(g).find("too ambiguous"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  // Ambiguity that deduplicates stays small: ("a" | "a")* over a long text.
  GrammarMatcher m(Grammar::parse(R"(root ::= ("a" | "a" | [a-z])*)"));
  EXPECT_TRUE(m.accept(std::string(2000, 'a')));
  EXPECT_LE(m.stacks().size(), 4u);
}

Tokenizer toy_vocab() {
  // SentencePiece with byte tokens: every text is representable.
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "{", "}", "\"", "a", "ab", "abc", "b", "\"a", "{\"", "1",
                                     "12", "\xE2\x96\x81", ":", "\xC3\xA9", "x"};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.push_back(name);
  }
  std::vector<int32_t> types(tokens.size(), 1);
  types[0] = 2;
  types[1] = types[2] = 3;
  for (size_t i = tokens.size() - 256; i < tokens.size(); ++i) types[i] = 6;
  return Tokenizer::spm(tokens, std::vector<float>(tokens.size(), 0.0f), types, 1, 2, false);
}

TEST(Grammar, VocabTrieAgreesWithTokenByTokenChecks) {
  const Tokenizer tok = toy_vocab();
  const GrammarVocab vocab(tok);
  for (const char* g : {R"(root ::= "{\"" [a-c]* "\":" [0-9]+ "}")", R"(root ::= [^a]*)", R"(root ::= "é" | "\u00e9x")",
                        R"(root ::= "ab" "c"?)"}) {
    GrammarMatcher m(Grammar::parse(g));
    for (const std::string step : {"", "{", "\"a", "b", "\xC3"}) {
      if (!step.empty() && !m.accept(step)) continue;
      std::vector<uint8_t> allowed;
      vocab.allowed(m, allowed);
      for (size_t t = 0; t < tok.n_vocab(); ++t) {
        EXPECT_EQ(allowed[t] != 0, vocab.allows(m, static_cast<int32_t>(t))) << g << " after '" << step << "' token " << t;
      }
      EXPECT_FALSE(allowed[1] || allowed[2]);  // control tokens never
    }
  }
}

TEST(Grammar, SamplerFollowsTheGrammar) {
  const Tokenizer tok = toy_vocab();
  const GrammarVocab vocab(tok);
  for (const float temp : {0.0f, 1.0f}) {
    SamplerParams p;
    p.temperature = temp;
    p.seed = 7;
    Sampler s(p, tok.n_vocab());
    GrammarFilter f(Grammar::parse(R"(root ::= "{" "\"" [ab]+ "\"" ":" [0-9]{1,3} "}")"), vocab,
                    [](int32_t t) { return t == 2; });
    std::vector<float> logits(tok.n_vocab());
    std::string out;
    std::mt19937 rng(3);
    for (int i = 0; i < 40 && !f.done(); ++i) {
      for (float& l : logits) l = std::uniform_real_distribution<float>(-3, 3)(rng);
      logits[17] = 10;  // the model wants "x", which the grammar never allows
      const int32_t t = s.sample(logits.data(), {}, &f);
      ASSERT_NE(t, 17);
      f.accept(t);
      if (t == 2) break;
      out += vocab.bytes(t);
    }
    EXPECT_TRUE(matches(R"(root ::= "{" "\"" [ab]+ "\"" ":" [0-9]{1,3} "}")", out)) << out;
  }
}

TEST(Grammar, FilterThatAllowsNothingIsAnError) {
  const Tokenizer tok = toy_vocab();
  const GrammarVocab vocab(tok);
  // A grammar of a character no token can spell: "\u0001" exists only as a byte token, so use
  // one outside every token: U+10FFFF.
  GrammarFilter f(Grammar::parse(R"(root ::= "\U0010FFFF")"), vocab, [](int32_t t) { return t == 2; });
  Sampler s(SamplerParams{}, tok.n_vocab());
  std::vector<float> logits(tok.n_vocab(), 0.0f);
  // <0xF4> starts U+10FFFF, so it is allowed; after it <0x8F>, <0xBF>, <0xBF>.
  EXPECT_EQ(s.sample(logits.data(), {}, &f), tok.find("<0xF4>"));
  GrammarFilter none(Grammar::parse(R"(root ::= [\x01])"), vocab, [](int32_t) { return false; });
  none.accept(tok.find("<0x01>"));
  EXPECT_THROW(s.sample(logits.data(), {}, &none), Error);  // done: nothing may follow, no end token
}

// stories260K tells stories; a grammar makes it answer with a JSON object of a name and an
// age, greedy and sampled, and the request ends where the grammar does.
TEST(Grammar, GeneratorOutputFollowsTheGrammar) {
  QMM_REQUIRE_STORIES260K();
  Context ctx{1};
  const Model model = Model::load(test::stories260k_path(), {}, ctx.pool());
  const Tokenizer tok = Tokenizer::from_gguf(model.file());
  Generator gen(model, tok, ctx, {});
  const std::string g = R"(root ::= "{\"name\": \"" [A-Za-z ]{1,12} "\", \"age\": " [1-9] [0-9]? "}")";
  for (const float temp : {0.0f, 0.8f}) {
    Request r;
    r.prompt = tok.encode("Once upon a time", true);
    r.params.sampling.temperature = temp;
    r.params.sampling.seed = 5;
    r.params.max_tokens = 100;
    r.params.grammar = Grammar::parse(g);
    std::string text;
    Result res;
    r.on_token = [&](const Piece& p) {
      text += p.text;
      return true;
    };
    r.on_done = [&](const Result& x) { res = x; };
    gen.submit(std::move(r));
    gen.run();
    EXPECT_EQ(res.reason, FinishReason::stop) << res.error;
    EXPECT_TRUE(matches(g, text)) << text;
  }
}

}  // namespace
}  // namespace qmm::llm
