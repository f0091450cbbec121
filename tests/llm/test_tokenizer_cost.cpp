// The tokenizer's cost (issue 22): BPE merging by a queue over linked symbols gives exactly the
// pieces of the simple pass-by-pass merge (every occurrence of the best-ranked pair, left to
// right, then the next rank), for any merge list; and tokenizing twice the text takes about
// twice the time, not four times (CPU time, the least of a few interleaved repetitions, so that a
// busy machine does not fail it), for the merging and for every pre-tokenizer. `qmm bench
// tokenizer` times 1 MiB hostile texts.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <ctime>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "text/synth_vocab.h"
#include "text/tokenizer.h"

namespace qmm::llm {
namespace {

// The pass-by-pass merge (the tokenizer's algorithm before issue 22): the reference.
std::vector<std::string> reference_merge(const std::string& word, const std::map<std::string, int>& rank) {
  std::vector<std::string> parts;
  for (char c : word) parts.emplace_back(1, c);
  while (parts.size() > 1) {
    int best = INT_MAX;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const auto it = rank.find(parts[i] + " " + parts[i + 1]);
      if (it != rank.end()) best = std::min(best, it->second);
    }
    if (best == INT_MAX) break;
    std::vector<std::string> merged;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i + 1 < parts.size()) {
        const auto it = rank.find(parts[i] + " " + parts[i + 1]);
        if (it != rank.end() && it->second == best) {
          merged.push_back(parts[i] + parts[i + 1]);
          ++i;
          continue;
        }
      }
      merged.push_back(parts[i]);
    }
    parts = std::move(merged);
  }
  return parts;
}

// Random merge lists over "abc" in random rank order (so also orders no trainer makes: a merge
// of "aa" ranked before the merge that makes "aa"), random words: the same pieces.
TEST(TokenizerCost, QueueMergesAsPassByPass) {
  std::mt19937 rng(7);
  for (int vocab = 0; vocab < 40; ++vocab) {
    std::vector<std::string> tokens = {"a", "b", "c"}, merges;
    std::map<std::string, int> rank;
    while (merges.size() < 30) {
      const std::string& l = tokens[rng() % tokens.size()];
      const std::string& r = tokens[rng() % tokens.size()];
      const std::string m = l + " " + r;
      if (rank.count(m) || std::find(tokens.begin(), tokens.end(), l + r) != tokens.end()) continue;
      rank[m] = 0;
      merges.push_back(m);
      tokens.push_back(l + r);
    }
    std::shuffle(merges.begin(), merges.end(), rng);
    for (size_t i = 0; i < merges.size(); ++i) rank[merges[i]] = static_cast<int>(i);
    const Tokenizer tok = Tokenizer::bpe(tokens, merges, {}, -1, -1, Tokenizer::Pre::gpt2);
    for (int w = 0; w < 100; ++w) {
      std::string word;
      for (size_t n = 1 + rng() % 40; word.size() < n;) word += static_cast<char>('a' + rng() % 3);
      std::vector<std::string> got;
      for (int32_t id : tok.encode(word, false)) got.push_back(tok.text(id));
      ASSERT_EQ(got, reference_merge(word, rank)) << "vocabulary " << vocab << ", word " << word;
    }
  }
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The CPU time of one encoding of `text`.
double encode_seconds(const Tokenizer& tok, const std::string& text) {
  const double t0 = cpu_seconds();
  const size_t n = tok.encode(text, false).size();
  const double t = cpu_seconds() - t0;
  EXPECT_GT(n, 0u);
  return t;
}

// `text` cut at n and 2n code points (whole UTF-8 characters).
void expect_near_linear(const Tokenizer& tok, const std::vector<std::string>& chars, size_t n, const char* what) {
  std::string half, all;
  for (size_t i = 0; i < 2 * n; ++i) (i < n ? half : all) += chars[i];
  all = half + all;
  // The least of 5 of each, the two lengths interleaved, so that another process's moment of
  // cache or memory traffic (ctest runs tests side by side) lands on both or on neither.
  double t1 = 1e9, t2 = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    t1 = std::min(t1, encode_seconds(tok, half));
    t2 = std::min(t2, encode_seconds(tok, all));
  }
  std::printf("%s: %zu characters %.4f s, %zu characters %.4f s\n", what, n, t1, 2 * n, t2);
  EXPECT_LT(t2, 2.5 * t1 + 0.002) << what << ": " << n << " characters " << t1 << " s, " << 2 * n << " characters " << t2 << " s";
}

// GPT-2's printable stand-in for each byte (bytes_to_unicode), written out independently of the library.
std::string byte_symbol(int b) {
  static std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    int next = 256;
    for (int c = 0; c < 256; ++c) {
      const bool printable = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255);
      const int cp = printable ? c : next++;
      std::string& s = t[static_cast<size_t>(c)];
      if (cp < 0x80) {
        s += static_cast<char>(cp);
      } else {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
      }
    }
    return t;
  }();
  return table[static_cast<size_t>(b)];
}

// A byte-level BPE vocabulary with 20000 CJK characters, each reached by two merges, and random
// CJK text (one pre-tokenizer piece): a text of n characters holds ~n distinct merges, so the
// pass-by-pass merge costs n passes of n symbols, as with a real vocabulary and a long word.
TEST(TokenizerCost, BpeIsNearLinear) {
  std::vector<std::string> tokens, merges, chars;
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_symbol(b));
  std::vector<std::string> second;
  for (uint32_t cp = 0x4E00; cp < 0x4E00 + 20000; ++cp) {
    const int b0 = 0xE0 | static_cast<int>(cp >> 12), b1 = 0x80 | static_cast<int>((cp >> 6) & 0x3F),
              b2 = 0x80 | static_cast<int>(cp & 0x3F);
    const std::string pair = byte_symbol(b0) + byte_symbol(b1);
    if (tokens.back() != pair) {  // (code points in order: one first merge per 64 of them)
      merges.push_back(byte_symbol(b0) + " " + byte_symbol(b1));
      tokens.push_back(pair);
    }
    second.push_back(pair + " " + byte_symbol(b2));
    chars.push_back(std::string{static_cast<char>(b0), static_cast<char>(b1), static_cast<char>(b2)});
  }
  for (const std::string& m : second) {
    merges.push_back(m);
    tokens.push_back(m.substr(0, m.find(' ')) + m.substr(m.find(' ') + 1));
  }
  const Tokenizer tok = Tokenizer::bpe(tokens, merges, {}, -1, -1, Tokenizer::Pre::gpt2);
  std::mt19937 rng(3);
  std::shuffle(chars.begin(), chars.end(), rng);
  expect_near_linear(tok, chars, 10000, "byte-level BPE");
}

TEST(TokenizerCost, SentencePieceIsNearLinear) {
  gguf::SynthVocab v = gguf::make_vocab(gguf::VocabFlavor::llama, 32000, 1);
  const Tokenizer tok = Tokenizer::spm(std::move(v.tokens), std::move(v.scores), std::move(v.token_type),
                                       static_cast<int32_t>(v.bos), static_cast<int32_t>(v.eos));
  std::mt19937 rng(3);
  std::vector<std::string> letters;
  for (int i = 0; i < 2 * 65536; ++i) letters.emplace_back(1, static_cast<char>('a' + rng() % 26));
  expect_near_linear(tok, letters, 65536, "SentencePiece");
}

// Every pre-tokenizer is linear in the text, on the inputs that would make a backtracking regex
// engine rescan: runs of capitals with a letter outside ASCII at the end (GPT-4o's U*L+ backs up
// through the whole run), alternating cases, one long word, long runs of spaces and of digits.
TEST(TokenizerCost, PreTokenizersAreLinear) {
  const std::vector<std::pair<const char*, std::string>> units = {
      {"capitals then a non-ASCII letter", std::string(200, 'A') + "\xC3\xA9"},
      {"alternating case", "aB\xC3\x89x"},
      {"one letter", "a"},
      {"spaces and newlines", "  \n"},
      {"digits", "7"},
  };
  for (Tokenizer::Pre pre : {Tokenizer::Pre::gpt2, Tokenizer::Pre::llama3, Tokenizer::Pre::qwen2, Tokenizer::Pre::gpt4o,
                             Tokenizer::Pre::standard}) {
    for (const auto& [what, unit] : units) {
      std::string half;
      while (half.size() < (256u << 10)) half += unit;
      const std::string all = half + half;
      double t1 = 1e9, t2 = 1e9;
      for (int rep = 0; rep < 5; ++rep) {
        double t0 = cpu_seconds();
        EXPECT_FALSE(pre_tokenize(half, pre).empty());
        t1 = std::min(t1, cpu_seconds() - t0);
        t0 = cpu_seconds();
        EXPECT_FALSE(pre_tokenize(all, pre).empty());
        t2 = std::min(t2, cpu_seconds() - t0);
      }
      // (20 ms of slack for page faults of the buffers: a quadratic pass over 256 K characters
      // would take many seconds)
      EXPECT_LT(t2, 2.5 * t1 + 0.02) << "pre-tokenizer " << static_cast<int>(pre) << ", " << what << ": " << t1 << " s, then " << t2 << " s";
    }
  }
}

}  // namespace
}  // namespace qmm::llm
