// Tokenizers: SentencePiece on stories260K's vocabulary (round trips, merges, byte fallback,
// whitespace, Unicode), byte-level BPE on a hand-made vocabulary, the Llama-3 / GPT-2
// pre-tokenizers, and streaming UTF-8 decoding.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "text/tokenizer.h"
#include "test_models.h"

namespace qmm::llm {
namespace {

Tokenizer stories_tokenizer() { return Tokenizer::from_gguf(gguf::File::open(test::stories260k_path())); }

TEST(SpmTokenizer, StoriesVocabularyMetadata) {
  QMM_REQUIRE_STORIES260K();
  const Tokenizer t = stories_tokenizer();
  EXPECT_EQ(t.kind(), Tokenizer::Kind::spm);
  EXPECT_EQ(t.n_vocab(), 512u);
  EXPECT_EQ(t.bos(), 1);
  EXPECT_EQ(t.eos(), 2);
  EXPECT_TRUE(t.add_bos());
  EXPECT_TRUE(t.add_space_prefix());
  EXPECT_TRUE(t.is_end_of_generation(2));
}

TEST(SpmTokenizer, MergesByScore) {
  QMM_REQUIRE_STORIES260K();
  const Tokenizer t = stories_tokenizer();
  // "▁Once" 403, "▁upon" 407, "▁a" 261, "▁time" 378.
  EXPECT_EQ(t.encode("Once upon a time", true), (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_EQ(t.encode("Once upon a time", false), (std::vector<int32_t>{403, 407, 261, 378}));
  EXPECT_EQ(t.encode("Lily", false), (std::vector<int32_t>{317}));
}

TEST(SpmTokenizer, EmptyTextIsBosOnly) {
  QMM_REQUIRE_STORIES260K();
  const Tokenizer t = stories_tokenizer();
  EXPECT_EQ(t.encode("", true), (std::vector<int32_t>{1}));
  EXPECT_TRUE(t.encode("", false).empty());
}

TEST(SpmTokenizer, ByteFallback) {
  QMM_REQUIRE_STORIES260K();
  const Tokenizer t = stories_tokenizer();
  // "日" (E6 97 A5) is not in the vocabulary: three byte tokens <0xE6><0x97><0xA5> (id = 3 + byte).
  const std::vector<int32_t> ids = t.encode("日", false);
  EXPECT_EQ(ids, (std::vector<int32_t>{410, 3 + 0xE6, 3 + 0x97, 3 + 0xA5}));  // "▁" then the bytes
  EXPECT_EQ(t.piece(3 + 0xE6), std::string("\xE6"));
  EXPECT_EQ(t.decode(ids), "日");
  // "é" is a token of its own.
  EXPECT_EQ(t.encode("é", false), (std::vector<int32_t>{410, 485}));
}

TEST(SpmTokenizer, RoundTrips) {
  QMM_REQUIRE_STORIES260K();
  const Tokenizer t = stories_tokenizer();
  const char* texts[] = {
      "Once upon a time, there was a little girl named Lily.",
      "Hello  world",          // two spaces
      "  leading and trailing  ",
      "line one\nline two\n\n\tindented\r\n",
      "café, naïve, 日本語, emoji 😀 and ‘quotes’ — done…",
      "<0x41> is text, not a byte token",
      "\xC2\xA0non-breaking\xE2\x80\x8Aspace",
      "a",
      " ",
  };
  for (const char* s : texts) {
    const std::vector<int32_t> ids = t.encode(s, true);
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids[0], 1);
    EXPECT_EQ(t.decode(ids), s) << "text: " << s;
  }
}

TEST(SpmTokenizer, ControlTokensInTextAreRecognised) {
  QMM_REQUIRE_STORIES260K();
  const Tokenizer t = stories_tokenizer();
  const std::vector<int32_t> ids = t.encode("Hi</s>", false);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.back(), 2);
  EXPECT_EQ(t.piece(2), "");
}

TEST(SpmTokenizer, HandMadeScoresDecideMerges) {
  // "ab" scores higher than "bc": "abc" -> "ab" + "c".
  const Tokenizer t = Tokenizer::spm({"<unk>", "<s>", "</s>", "a", "b", "c", "ab", "bc", "\xE2\x96\x81"},
                                     {0, 0, 0, -10, -10, -10, -1, -2, -5}, {}, 1, 2, false);
  EXPECT_EQ(t.encode("abc", false), (std::vector<int32_t>{6, 5}));
  const Tokenizer u = Tokenizer::spm({"<unk>", "<s>", "</s>", "a", "b", "c", "ab", "bc", "\xE2\x96\x81"},
                                     {0, 0, 0, -10, -10, -10, -3, -2, -5}, {}, 1, 2, false);
  EXPECT_EQ(u.encode("abc", false), (std::vector<int32_t>{3, 7}));
  // No byte tokens in this vocabulary: unknown characters become <unk>.
  EXPECT_EQ(t.encode("x", false), (std::vector<int32_t>{0}));
}

// ---- Byte-level BPE ---------------------------------------------------------------------------

// A vocabulary of the 256 byte characters (GPT-2 mapping) plus merged tokens.
Tokenizer small_bpe(Tokenizer::Pre pre) {
  std::vector<std::string> tokens;
  // GPT-2 byte -> code point mapping, written out here independently of the library.
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    const int cp = printable ? b : next++;
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    tokens.push_back(s);
  }
  const std::vector<std::string> merges = {"h e", "l l", "he ll", "hell o", "\xC4\xA0 w", "o r", "\xC4\xA0w or", "l d",
                                           "\xC4\xA0wor ld", "1 2", "12 3"};
  for (const char* t : {"he", "ll", "hell", "hello", "\xC4\xA0w", "or", "\xC4\xA0wor", "ld", "\xC4\xA0world", "12", "123",
                        "<|end|>"}) {
    tokens.push_back(t);
  }
  std::vector<int32_t> types(tokens.size(), 1);
  types.back() = 3;  // <|end|> is a control token
  return Tokenizer::bpe(tokens, merges, types, -1, static_cast<int32_t>(tokens.size() - 1), pre);
}

TEST(BpeTokenizer, MergesByRank) {
  const Tokenizer t = small_bpe(Tokenizer::Pre::llama3);
  const int32_t hello = 259, world = 264;
  EXPECT_EQ(t.text(hello), "hello");
  EXPECT_EQ(t.encode("hello world", false), (std::vector<int32_t>{hello, world}));
  EXPECT_EQ(t.decode(t.encode("hello world", false)), "hello world");
  // "hellx": "hell" then the byte 'x'.
  EXPECT_EQ(t.encode("hellx", false), (std::vector<int32_t>{258, 'x'}));
}

// llama.cpp adds BOS for the Llama-3 pre-tokenizers when the file does not say (as the Llama 3
// vocabulary rebuilt from its tokenizer.json, whose post-processor has no BOS template), and not
// for the other BPE ones; the key, when present, decides.
TEST(BpeTokenizer, AddBosDefaultsAsLlamaCpp) {
  const std::string path = (std::filesystem::temp_directory_path() / ("qmm-addbos-" + std::to_string(::getpid()) + ".gguf")).string();
  auto load = [&](const char* pre, int key) {
    gguf::Writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_string("tokenizer.ggml.pre", pre);
    w.set_string_array("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b", "<|begin_of_text|>"});
    w.set_i32_array("tokenizer.ggml.token_type", {1, 1, 3});
    w.set_string_array("tokenizer.ggml.merges", std::vector<std::string>{});
    w.set_u32("tokenizer.ggml.bos_token_id", 2);
    if (key >= 0) w.set_bool("tokenizer.ggml.add_bos_token", key == 1);
    w.write(path);
    return Tokenizer::from_gguf(gguf::File::open(path));
  };
  EXPECT_EQ(load("llama-bpe", -1).encode("a", true), (std::vector<int32_t>{2, 0}));
  EXPECT_TRUE(load("llama3", -1).add_bos());
  EXPECT_FALSE(load("llama-bpe", 0).add_bos());
  EXPECT_FALSE(load("qwen2", -1).add_bos());
  EXPECT_FALSE(load("gpt-2", -1).add_bos());
  EXPECT_TRUE(load("qwen2", 1).add_bos());
  std::filesystem::remove(path);
}

TEST(BpeTokenizer, ByteLevelRoundTrips) {
  for (Tokenizer::Pre pre : {Tokenizer::Pre::llama3, Tokenizer::Pre::gpt2}) {
    const Tokenizer t = small_bpe(pre);
    for (const char* s : {"hello world", "  two  spaces\n\nand\ttabs ", "Ünïcödé 日本 😀", "it's 12345 o'clock!!", ""}) {
      EXPECT_EQ(t.decode(t.encode(s, false)), s) << s;
    }
    // Invalid UTF-8 survives as bytes in the pieces (decode() itself emits only valid UTF-8).
    const std::string raw = "\xFF\xFE raw";
    std::string pieces;
    for (int32_t id : t.encode(raw, false)) pieces += t.piece(id);
    EXPECT_EQ(pieces, raw);
    EXPECT_EQ(t.decode(t.encode(raw, false)), "\xEF\xBF\xBD\xEF\xBF\xBD raw");
  }
}

TEST(BpeTokenizer, ControlTokenInText) {
  const Tokenizer t = small_bpe(Tokenizer::Pre::llama3);
  const std::vector<int32_t> ids = t.encode("hello<|end|>", false);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[1], t.eos());
  EXPECT_TRUE(t.is_end_of_generation(ids[1]));
}

std::vector<std::string> split(std::string_view s, Tokenizer::Pre pre) {
  std::vector<std::string> out;
  for (std::string_view w : pre_tokenize(s, pre)) out.emplace_back(w);
  return out;
}

TEST(PreTokenizer, Llama3) {
  using V = std::vector<std::string>;
  const auto p = Tokenizer::Pre::llama3;
  EXPECT_EQ(split("Hello world", p), (V{"Hello", " world"}));
  EXPECT_EQ(split("I'M here, it's", p), (V{"I", "'M", " here", ",", " it", "'s"}));
  EXPECT_EQ(split("12345 apples", p), (V{"123", "45", " apples"}));
  EXPECT_EQ(split("a  b", p), (V{"a", " ", " b"}));
  EXPECT_EQ(split("end.\n\nNext", p), (V{"end", ".\n\n", "Next"}));
  EXPECT_EQ(split("x \n\n y", p), (V{"x", " \n\n", " y"}));
  EXPECT_EQ(split("trailing   ", p), (V{"trailing", "   "}));
  EXPECT_EQ(split("$hello ...!", p), (V{"$hello", " ...!"}));
  EXPECT_EQ(split("日本語 text", p), (V{"日本語", " text"}));
  EXPECT_EQ(split("😀😀 ok", p), (V{"😀😀", " ok"}));
}

TEST(PreTokenizer, Qwen2OneDigitPerPiece) {
  using V = std::vector<std::string>;
  const auto p = Tokenizer::Pre::qwen2;
  EXPECT_EQ(split("12345 apples", p), (V{"1", "2", "3", "4", "5", " apples"}));
  EXPECT_EQ(split("I'M here", p), (V{"I", "'M", " here"}));
  EXPECT_EQ(split("x \n\n y", p), (V{"x", " \n\n", " y"}));
}

TEST(PreTokenizer, ExactUnicodeCategories) {
  EXPECT_TRUE(is_unicode_letter(0x65E5));   // 日 Lo
  EXPECT_TRUE(is_unicode_letter(0xE9));     // é Ll
  EXPECT_TRUE(is_unicode_letter(0x2B0));    // ʰ Lm
  EXPECT_FALSE(is_unicode_letter(0x301));   // combining acute: Mn, not a letter
  EXPECT_FALSE(is_unicode_letter(0x1F600)); // 😀 So
  EXPECT_TRUE(is_unicode_number(0x0663));   // Arabic-Indic three: Nd
  EXPECT_TRUE(is_unicode_number(0x2167));   // Ⅷ: Nl
  EXPECT_TRUE(is_unicode_number(0x00BD));   // ½: No
  EXPECT_TRUE(is_unicode_number(0x1D7CE));  // mathematical bold digit zero: Nd outside the BMP
  EXPECT_FALSE(is_unicode_number(0x4E00));  // 一 is a letter (Lo), not \p{N}
  // A combining mark splits a word: "e" + U+0301 + "x" is three pieces under Llama-3's regex.
  using V = std::vector<std::string>;
  EXPECT_EQ(split("e\xCC\x81x", Tokenizer::Pre::llama3), (V{"e", "\xCC\x81x"}));
}

// GPT-4o as llama.cpp runs it: a word is an optional non-letter, "upper" letters (not a-z), then
// "lower" ones (not A-Z); letters outside ASCII are both (so " ÉCOLE" is " É" and "COLE", as the
// regex backtracks); contractions follow in either case.
TEST(PreTokenizer, Gpt4o) {
  const auto split = [](std::string_view t) { return pre_tokenize(t, Tokenizer::Pre::gpt4o); };
  using V = std::vector<std::string_view>;
  EXPECT_EQ(split("HelloWorld CamelCASE HELLOworld"), (V{"Hello", "World", " Camel", "CASE", " HELLOworld"}));
  EXPECT_EQ(split("I'M don't you'RE"), (V{"I'M", " don't", " you'RE"}));
  EXPECT_EQ(split("12345 !!!\n/x"), (V{"123", "45", " !!!\n/", "x"}));
  EXPECT_EQ(split("caf\xC3\xA9 \xC3\x89" "COLE \xE6\x97\xA5\xE6\x9C\xAC"), (V{"caf\xC3\xA9", " \xC3\x89", "COLE", " \xE6\x97\xA5\xE6\x9C\xAC"}));
  EXPECT_EQ(split("a  \n\n b"), (V{"a", "  \n\n", " b"}));
  EXPECT_EQ(find_pre_tokenizer("gpt-4o"), Tokenizer::Pre::gpt4o);
  EXPECT_EQ(find_pre_tokenizer("llama4"), Tokenizer::Pre::gpt4o);
}

TEST(PreTokenizer, Gpt2) {
  using V = std::vector<std::string>;
  const auto p = Tokenizer::Pre::gpt2;
  EXPECT_EQ(split("Hello world", p), (V{"Hello", " world"}));
  EXPECT_EQ(split("12345 apples", p), (V{"12345", " apples"}));
  EXPECT_EQ(split("I'M it's", p), (V{"I", "'", "M", " it", "'s"}));  // case-sensitive contractions
  EXPECT_EQ(split("a  b", p), (V{"a", " ", " b"}));
  EXPECT_EQ(split("$hello", p), (V{"$", "hello"}));
}

// llama.cpp's default (tokenizer.ggml.pre missing or "default"): punctuation runs split first
// (so GPT-2's contractions never form), then GPT-2's regex in each piece, then digit runs, then
// groups of three ASCII digits.
TEST(PreTokenizer, LlamaCppDefault) {
  using V = std::vector<std::string>;
  const auto p = Tokenizer::Pre::standard;
  EXPECT_EQ(split("Hello, world!", p), (V{"Hello", ",", " world", "!"}));
  EXPECT_EQ(split("it's 12345 $5", p), (V{"it", "'", "s", " ", "123", "45", " ", "$", "5"}));
  EXPECT_EQ(split("a+=b `x`", p), (V{"a", "+=", "b", " `", "x", "`"}));  // ` is a symbol, not \p{P} or listed
  EXPECT_EQ(split("x1234567y", p), (V{"x", "123", "456", "7", "y"}));
  EXPECT_EQ(split("\xC2\xBFQu\xC3\xA9? \xE2\x80\x94ok", p), (V{"\xC2\xBF", "Qu\xC3\xA9", "?", " ", "\xE2\x80\x94", "ok"}));  // ¿ — are \p{P}
  EXPECT_EQ(split("  a\n\n", p), (V{" ", " a", "\n\n"}));
  EXPECT_EQ(split("", p), V{});
}

// ---- Special tokens written in the text (llama.cpp's parse_special) -------------------------

TEST(SpecialTokens, LongestTokenFirstOverTheWholeText) {
  // Control tokens "<a>" and "<a><b>": the longer one is found first wherever it is.
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "x", "<a>", "<a><b>", "\xE2\x96\x81"};
  std::vector<int32_t> types = {2, 3, 3, 1, 3, 4, 1};
  const Tokenizer t = Tokenizer::spm(tokens, {}, types, 1, 2, false);
  EXPECT_EQ(t.encode("x<a><b>x<a>", false), (std::vector<int32_t>{3, 5, 3, 4}));
  EXPECT_EQ(t.encode("<unk><s>", false), (std::vector<int32_t>{0, 1}));  // unknown tokens too
}

TEST(SpecialTokens, EndOfTurnTokensEndGeneration) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "x", "<|end|>", "<end_of_turn>", "\xE2\x96\x81"};
  const Tokenizer t = Tokenizer::spm(tokens, {}, {2, 3, 3, 1, 1, 1, 1}, 1, 2, true);
  EXPECT_EQ(t.eot(), 4);  // the first of llama.cpp's end-of-turn texts present
  EXPECT_TRUE(t.is_end_of_generation(2));
  EXPECT_TRUE(t.is_end_of_generation(4));
  EXPECT_TRUE(t.is_end_of_generation(5));
  EXPECT_FALSE(t.is_end_of_generation(3));
  EXPECT_EQ(t.piece(5), "");  // marked as control, as llama.cpp does
  EXPECT_EQ(t.encode("x<end_of_turn>", false), (std::vector<int32_t>{6, 3, 5}));
}

// llama.cpp's rule (llama-vocab.cpp): a token spelled like an end of generation is a control
// token that ends generation whatever type the file gives it, e.g. "</s>" in a Qwen-style BPE
// vocabulary, where it is typed normal: the text "</s>" is that one token, and it stops a
// generation. FIM pad / repo / separator tokens end generation too; FIM prefix is control only.
TEST(SpecialTokens, ControlLookingTokensAreControlAndEndGeneration) {
  std::vector<std::string> tokens;
  for (char c : std::string("</s>abc")) tokens.emplace_back(1, c);
  for (const char* t : {"<|im_end|>", "</s>", "<|fim_prefix|>", "<|fim_pad|>", "<|file_sep|>", "<|fim_middle|>x"}) tokens.push_back(t);
  const std::vector<int32_t> types(tokens.size(), 1);  // all normal
  const Tokenizer t = Tokenizer::bpe(tokens, {}, types, -1, 7, Tokenizer::Pre::qwen2);
  const int32_t s = t.find("</s>"), pre = t.find("<|fim_prefix|>");
  EXPECT_EQ(t.encode("a</s>b", false), (std::vector<int32_t>{t.find("a"), s, t.find("b")}));
  EXPECT_TRUE(t.is_end_of_generation(s));
  EXPECT_EQ(t.piece(s), "");
  EXPECT_EQ(t.encode("<|fim_prefix|>", false), (std::vector<int32_t>{pre}));
  EXPECT_FALSE(t.is_end_of_generation(pre));
  EXPECT_TRUE(t.is_end_of_generation(t.find("<|fim_pad|>")));
  EXPECT_TRUE(t.is_end_of_generation(t.find("<|file_sep|>")));
  EXPECT_FALSE(t.is_end_of_generation(t.find("<|fim_middle|>x")));
  // gpt-oss's exception: with <|return|> and <|call|>, <|end|> is text.
  std::vector<std::string> oss = {"a", "<|end|>", "<|return|>", "<|call|>", "<|channel|>"};
  const Tokenizer o = Tokenizer::bpe(oss, {}, std::vector<int32_t>(oss.size(), 3), -1, 2, Tokenizer::Pre::llama3);
  EXPECT_FALSE(o.is_end_of_generation(1));
  EXPECT_TRUE(o.is_end_of_generation(2));
  EXPECT_TRUE(o.is_end_of_generation(3));
  EXPECT_EQ(o.piece(4), "<|channel|>");  // always rendered
}

// ---- Streaming ---------------------------------------------------------------------------------

TEST(TextStream, BuffersIncompleteUtf8) {
  std::string s = "ab\xE6\x97";
  EXPECT_EQ(take_valid_utf8(s), "ab");
  EXPECT_EQ(s, "\xE6\x97");
  s += "\xA5!";
  EXPECT_EQ(take_valid_utf8(s), "日!");
  EXPECT_TRUE(s.empty());
  s = "\xFFz";  // never valid
  EXPECT_EQ(take_valid_utf8(s), "\xEF\xBF\xBDz");
  s = "\xE6x";  // a lead byte followed by a non-continuation
  EXPECT_EQ(take_valid_utf8(s), "\xEF\xBF\xBDx");
  s = "\xED\xA0\x80";  // a surrogate
  EXPECT_EQ(take_valid_utf8(s), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(TextStream, StreamsByteFallbackTokens) {
  QMM_REQUIRE_STORIES260K();
  const Tokenizer t = stories_tokenizer();
  TextStream ts(t, true);
  EXPECT_EQ(ts.push(403), "Once");  // leading space of the first word removed
  EXPECT_EQ(ts.push(3 + 0xE6), "");
  EXPECT_EQ(ts.push(3 + 0x97), "");
  EXPECT_EQ(ts.push(3 + 0xA5), "日");
  EXPECT_EQ(ts.push(407), " upon");
  EXPECT_EQ(ts.push(3 + 0xE6), "");
  EXPECT_EQ(ts.flush(), "\xEF\xBF\xBD");
}

}  // namespace
}  // namespace qmm::llm
