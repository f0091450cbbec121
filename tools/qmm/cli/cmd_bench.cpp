// qmm bench SUBJECT: dispatches to the benchmark of one subject.
#include <cstdio>
#include <cstring>

#include "args.h"
#include "qmm/bench/bench_verbs.h"
#include "verbs.h"

namespace qmm::cli {
namespace {

struct Subject {
  const char* name;
  int (*fn)(int, char**);
  const char* summary;
};

const Subject kSubjects[] = {
    {"matmul", bench_matmul, "time one matmul shape: selected kernel vs scalar, GOPS, GB/s, % of limits"},
    {"limits", bench_limits, "measure this machine's DRAM / cache bandwidth and int8 / FMA peaks"},
    {"serve", bench_serve, "aggregate decode tokens/s of 1, 2, 4, 8 sequences decoded together (qmm serve)"},
    {"kl", bench_kl, "KL divergence of the next-token distribution of qc8 / qc4 / q8_0 / q4_0 weights vs F32"},
    {"tokenizer", bench_tokenizer, "CPU seconds to tokenize 1 MiB of hostile texts (one letter, random bytes, emoji, CJK)"},
    {"model", bench_model, "prefill / decode tokens/s of a GGUF model, llama-bench style, vs the machine limits"},
};

}  // namespace

int cmd_bench(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    std::FILE* f = argc < 2 ? stderr : stdout;
    std::fprintf(f, "usage: qmm bench SUBJECT [options]\n\nsubjects:\n");
    for (const Subject& s : kSubjects) std::fprintf(f, "  %-10s %s\n", s.name, s.summary);
    return argc < 2 ? 2 : 0;
  }
  for (const Subject& s : kSubjects) {
    if (!std::strcmp(argv[1], s.name)) return s.fn(argc - 1, argv + 1);
  }
  throw UsageError(std::string("unknown subject '") + argv[1] + "' (qmm bench --help lists them)");
}

}  // namespace qmm::cli
