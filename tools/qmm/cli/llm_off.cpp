// The LLM verbs of a build with -DQMM_BUILD_LLM=OFF (kernels only): each says so in one line.
// A verb added to main.cpp or cmd_bench.cpp that needs src/llm gets a line here too.
#include <string>

#include "args.h"
#include "qmm/bench/bench_verbs.h"
#include "verbs.h"

namespace qmm::cli {
namespace {

[[noreturn]] void not_built(const char* verb) {
  throw UsageError(std::string("'") + verb + "' needs the LLM path; this qmm was built with -DQMM_BUILD_LLM=OFF");
}

}  // namespace

const bool kHaveLlm = false;

int cmd_gguf(int, char**) { not_built("gguf"); }
int bench_tokenizer(int, char**) { not_built("bench tokenizer"); }
int cmd_quantize(int, char**) { not_built("quantize"); }
std::string quantize_types() { return ""; }
int cmd_synth(int, char**) { not_built("synth"); }
int cmd_run(int, char**) { not_built("run"); }
int cmd_chat(int, char**) { not_built("chat"); }
int cmd_serve(int, char**) { not_built("serve"); }
int cmd_tune(int, char**) { not_built("tune"); }
int cmd_tokenize(int, char**) { not_built("tokenize"); }
int bench_model(int, char**) { not_built("bench model"); }
int bench_serve(int, char**) { not_built("bench serve"); }
int bench_kl(int, char**) { not_built("bench kl"); }

}  // namespace qmm::cli
