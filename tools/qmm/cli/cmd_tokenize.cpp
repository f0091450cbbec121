// qmm tokenize: the token ids of a text, as llama-tokenize prints them. Only the tokenizer is
// read from the GGUF file (no weights are packed), so it is quick on any model.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "args.h"
#include "core/error.h"
#include "gguf/gguf.h"
#include "text/tokenizer.h"
#include "verbs.h"

namespace qmm::cli {

int cmd_tokenize(int argc, char** argv) {
  std::string model, prompt, file;
  bool ids = false, show_count = false, from_stdin = false, no_bos = false;
  Args args("tokenize",
            "The tokens of a text with a GGUF model's tokenizer, as llama-tokenize prints them: one line per token\n"
            "(id -> 'piece'), or --ids for the list of ids. BOS / EOS are added as the model asks (--no-bos: no BOS).",
            argc - 1, argv + 1);
  args.str("-m,--model", &model, "FILE", "GGUF model (required; only its tokenizer is read)")
      .str("-p,--prompt", &prompt, "TEXT", "the text")
      .str("-f,--file", &file, "FILE", "read the text from FILE")
      .flag("--stdin", &from_stdin, "read the text from standard input")
      .flag("--ids", &ids, "print only the ids, as a list: [1, 2, 3]")
      .flag("--show-count", &show_count, "print the number of tokens at the end")
      .flag("--no-bos", &no_bos, "do not add the BOS token");
  args.parse();
  if (model.empty()) throw UsageError("-m/--model is required");
  if (!prompt.empty() + !file.empty() + from_stdin != 1) throw UsageError("give the text as one of -p TEXT, -f FILE or --stdin");
  std::string text = prompt;
  if (!file.empty() || from_stdin) {
    if (!file.empty() && std::filesystem::is_directory(file)) throw UsageError("-f " + file + ": is a directory, not a file");
    std::ifstream f;
    if (!file.empty()) {
      f.open(file, std::ios::binary);
      if (!f) fail(Status::io, "cannot open " + file);
    }
    std::istream& in = file.empty() ? std::cin : f;
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) fail(Status::io, "cannot read " + (file.empty() ? std::string("standard input") : file));
  }
  const gguf::File gf = gguf::File::open(model);
  const llm::Tokenizer tok = llm::Tokenizer::from_gguf(gf);
  std::vector<int32_t> tokens = tok.encode(text, true);
  if (no_bos && !tokens.empty() && tokens.front() == tok.bos() && tok.add_bos()) tokens.erase(tokens.begin());
  if (ids) {
    std::printf("[");
    for (size_t i = 0; i < tokens.size(); ++i) std::printf("%s%d", i ? ", " : "", tokens[i]);
    std::printf("]\n");
  } else {
    for (const int32_t t : tokens) {
      const std::string piece = tok.piece(t);
      std::printf("%6d -> '%s'\n", t, piece.empty() ? tok.text(t).c_str() : piece.c_str());
    }
  }
  if (show_count) std::printf("Total number of tokens: %zu\n", tokens.size());
  return 0;
}

}  // namespace qmm::cli
