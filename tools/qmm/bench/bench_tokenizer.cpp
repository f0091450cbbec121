// qmm bench tokenizer: CPU seconds to tokenize 1 MiB of hostile text (one letter repeated,
// random letters, random bytes, one emoji repeated, random CJK) with a model's tokenizer, or
// without -m with synthetic vocabularies the size of Llama 3's (byte-level BPE, 128256 tokens)
// and Llama 2's (SentencePiece, 32000 tokens). The tokenizer is O(n log n) in the length of a
// pre-tokenizer piece, so each input should take well under a second.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "qmm/cli/args.h"
#include "bench_verbs.h"
#include "gguf/gguf.h"
#include "text/synth_vocab.h"
#include "text/tokenizer.h"

namespace qmm::cli {
namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  }
  s += static_cast<char>(0x80 | (cp & 0x3F));
}

struct Input {
  const char* name;
  std::string text;
};

std::vector<Input> inputs(size_t bytes) {
  std::mt19937_64 rng(1);
  std::vector<Input> in;
  in.push_back({"one letter", std::string(bytes, 'a')});
  std::string s;
  while (s.size() < bytes) s += static_cast<char>('a' + rng() % 26);
  in.push_back({"random letters", s});
  s.clear();
  while (s.size() < bytes) s += static_cast<char>(rng() % 256);
  in.push_back({"random bytes", s});
  s.clear();
  while (s.size() + 4 <= bytes) s += "\xF0\x9F\x98\x80";  // 😀
  in.push_back({"one emoji", s});
  s.clear();
  while (s.size() + 3 <= bytes) append_utf8(s, 0x4E00 + static_cast<uint32_t>(rng() % 20000));
  in.push_back({"random CJK", s});
  return in;
}

void run(const char* what, const llm::Tokenizer& tok, size_t bytes) {
  std::printf("%s\n\n| input | MiB | tokens | CPU s |\n|---|---|---|---|\n", what);
  for (const Input& in : inputs(bytes)) {
    const double t0 = cpu_seconds();
    const size_t n = tok.encode(in.text, false).size();
    std::printf("| %s | %.2f | %zu | %.3f |\n", in.name, static_cast<double>(in.text.size()) / (1 << 20), n,
                cpu_seconds() - t0);
    std::fflush(stdout);
  }
  std::printf("\n");
}

}  // namespace

int bench_tokenizer(int argc, char** argv) {
  std::string model_path;
  size_t kib = 1024;
  Args args("bench tokenizer",
            "CPU seconds to tokenize hostile texts (one letter, random letters, random bytes, one emoji, CJK) with the\n"
            "tokenizer of -m MODEL, or with synthetic Llama-3-sized BPE and Llama-2-sized SentencePiece vocabularies.",
            argc - 1, argv + 1);
  args.str("-m,--model", &model_path, "FILE", "GGUF model whose tokenizer to time (default: synthetic vocabularies)")
      .size("--kib", &kib, "KiB of each text (default 1024)");
  args.parse();
  if (kib == 0 || kib > (size_t{1} << 20)) throw UsageError("--kib must be 1 to 1048576");
  const size_t bytes = kib << 10;
  if (!model_path.empty()) {
    const gguf::File f = gguf::File::open(model_path);
    const llm::Tokenizer tok = llm::Tokenizer::from_gguf(f);
    run((model_path + ": " + tok.description()).c_str(), tok, bytes);
    return 0;
  }
  {
    gguf::SynthVocab v = gguf::make_vocab(gguf::VocabFlavor::llama3, 128256, 1);
    const llm::Tokenizer tok = llm::Tokenizer::bpe(std::move(v.tokens), v.merges, std::move(v.token_type),
                                                   static_cast<int32_t>(v.bos), static_cast<int32_t>(v.eos));
    run(("synthetic Llama 3 vocabulary: " + tok.description()).c_str(), tok, bytes);
  }
  {
    gguf::SynthVocab v = gguf::make_vocab(gguf::VocabFlavor::llama, 32000, 1);
    const llm::Tokenizer tok = llm::Tokenizer::spm(std::move(v.tokens), std::move(v.scores), std::move(v.token_type),
                                                   static_cast<int32_t>(v.bos), static_cast<int32_t>(v.eos));
    run(("synthetic Llama 2 vocabulary: " + tok.description()).c_str(), tok, bytes);
  }
  return 0;
}

}  // namespace qmm::cli
