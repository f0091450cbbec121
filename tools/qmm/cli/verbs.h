// The verbs of the qmm command; each lives in its own cmd_*.cpp. argv[0] is the verb.
#pragma once

#include <string>

namespace qmm::cli {

// False in a build with -DQMM_BUILD_LLM=OFF, whose LLM verbs (llm_off.cpp) only say so.
extern const bool kHaveLlm;

int cmd_info(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_gguf(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
// The TYPEs `qmm quantize` writes, from the weight-type table ("" without the LLM verbs).
std::string quantize_types();
int cmd_synth(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_chat(int argc, char** argv);
int cmd_layout(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_tune(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);

}  // namespace qmm::cli
