// qmm: the command line. `qmm VERB --help` documents each verb.
#include <cstdio>
#include <cstring>
#include <exception>

#include "args.h"
#include "core/error.h"
#include "verbs.h"

namespace {

struct Verb {
  const char* name;
  int (*fn)(int, char**);
  const char* summary;
};

const Verb kVerbs[] = {
    {"info", qmm::cli::cmd_info, "CPU features and the kernel each weight type gets"},
    {"bench", qmm::cli::cmd_bench, "benchmarks: matmul kernels, machine limits, whole models"},
    {"gguf", qmm::cli::cmd_gguf, "validate a GGUF file and print its metadata and tensors"},
    {"quantize", qmm::cli::cmd_quantize, "requantize a GGUF model to q4_0, q8_0, f16 or f32"},
    {"synth", qmm::cli::cmd_synth, "write a random-weight Llama GGUF of a named shape"},
    {"run", qmm::cli::cmd_run, "generate text with a GGUF Llama-family model (llama-cli flags)"},
    {"serve", qmm::cli::cmd_serve, "an OpenAI-compatible HTTP server; concurrent requests decoded as one batch"},
    {"layout", qmm::cli::cmd_layout, "draw where each element lands in a packed buffer (text or SVG)"},
};

void print_usage(FILE* f) {
  std::fprintf(f, "usage: qmm VERB [options]   (qmm VERB --help for details)\n\nverbs:\n");
  for (const Verb& v : kVerbs) std::fprintf(f, "  %-10s %s\n", v.name, v.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  if (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    print_usage(stdout);
    return 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::puts("qmm 0.1.0");
    return 0;
  }
  for (const Verb& v : kVerbs) {
    if (std::strcmp(argv[1], v.name) != 0) continue;
    try {
      return v.fn(argc - 1, argv + 1);
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
