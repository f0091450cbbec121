// qmm: the command line. `qmm VERB --help` documents each verb.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "args.h"
#include "core/error.h"
#include "qmm/qmm.h"
#include "verbs.h"

namespace {

struct Verb {
  const char* name;
  int (*fn)(int, char**);
  const char* summary;
  bool llm;  // needs src/llm (a build with -DQMM_BUILD_LLM=OFF has a stub: llm_off.cpp)
};

const Verb kVerbs[] = {
    {"info", qmm::cli::cmd_info, "CPU features and the kernel each weight type gets", false},
    {"bench", qmm::cli::cmd_bench, "benchmarks: matmul kernels, machine limits, whole models", false},
    {"layout", qmm::cli::cmd_layout, "draw where each element lands in a packed buffer (text or SVG)", false},
    {"run", qmm::cli::cmd_run, "generate text with a GGUF Llama-family model (llama-cli flags)", true},
    {"chat", qmm::cli::cmd_chat, "chat with a GGUF model in the terminal or through a pipe (KV cache kept between turns)", true},
    {"serve", qmm::cli::cmd_serve, "an OpenAI-compatible HTTP server; concurrent requests decoded as one batch", true},
    {"quantize", qmm::cli::cmd_quantize, "requantize a GGUF model to another weight type or K-quant mix (llama-quantize names)", true},
    {"tokenize", qmm::cli::cmd_tokenize, "the token ids of a text (llama-tokenize: --ids, --show-count)", true},
    {"gguf", qmm::cli::cmd_gguf, "validate a GGUF file and print its metadata and tensors", true},
    {"tune", qmm::cli::cmd_tune, "measure the decode kernels and thread chunks of a model on this CPU (cached)", true},
    {"synth", qmm::cli::cmd_synth, "write a random-weight GGUF model of a named shape (qmm synth --help lists them)", true},
};

void print_usage(FILE* f) {
  std::fprintf(f, "usage: qmm VERB [options]   (qmm VERB --help for details)\n       qmm --version\n\nverbs:\n");
  for (const Verb& v : kVerbs) {
    const std::string types = v.fn == qmm::cli::cmd_quantize ? qmm::cli::quantize_types() : "";
    std::fprintf(f, "  %-10s %s%s%s\n", v.name, v.summary, types.empty() ? "" : (": " + types).c_str(),
                 v.llm && !qmm::cli::kHaveLlm ? " [not in this build]" : "");
  }
}

// Output lost on the way (`qmm run > /dev/full`, a closed pipe) is an error, not a success.
int check_stdout(const char* verb, int rc) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return rc;
  std::fprintf(stderr, "qmm %s: cannot write to standard output: %s\n", verb, errno ? std::strerror(errno) : "write error");
  return rc == 0 ? 1 : rc;
}

int qmm_main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  if (!std::strcmp(argv[1], "help") && argc > 2) {  // `qmm help VERB [SUBJECT]` = `qmm VERB [SUBJECT] --help`
    static char help[] = "--help";
    std::vector<char*> args{argv[0]};
    args.insert(args.end(), argv + 2, argv + argc);
    args.push_back(help);
    return qmm_main(static_cast<int>(args.size()), args.data());
  }
  if (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    print_usage(stdout);
    return 0;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "-V")) {
    std::printf("qmm %s (%s)\n", qmm_version(), qmm::cli::kHaveLlm ? "kernels + LLM path" : "kernels only");
    return 0;
  }
  for (const Verb& v : kVerbs) {
    if (std::strcmp(argv[1], v.name) != 0) continue;
    try {
      return check_stdout(v.name, v.fn(argc - 1, argv + 1));
    } catch (const qmm::cli::HelpShown&) {
      return 0;
    } catch (const qmm::cli::UsageError& e) {
      std::fprintf(stderr, "qmm %s: %s\n", v.name, e.what());
      return 2;
    } catch (const qmm::Error& e) {
      std::fprintf(stderr, "qmm %s: %s\n", v.name, e.what());
      return e.status() == qmm::Status::invalid_argument ? 2 : 1;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "qmm %s: out of memory\n", v.name);
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "qmm %s: %s\n", v.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "qmm: unknown verb '%s' (qmm --help lists them)\n", argv[1]);
  return 2;
}

}  // namespace

int main(int argc, char** argv) { return qmm_main(argc, argv); }
