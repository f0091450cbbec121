// qmm synth SHAPE -o FILE: a random-weight GGUF of a named shape and family (src/llm/synth.h).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "args.h"
#include "bounded_read.h"
#include "core/blocks.h"
#include "text/chat_template.h"
#include "llm/synth.h"
#include "verbs.h"

namespace qmm::cli {

namespace {

// The text of --chat-template FILE ("" when not given: the family's built-in template).
std::string read_template(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the chat template '" + path + "'");
  return read_all_bounded(in, llm::kMaxChatTemplateBytes, "the chat template '" + path + "'");
}

}  // namespace

int cmd_synth(int argc, char** argv) {
  std::string shape_s, out, type_s = "q4_0", template_s;
  long long seed = 1;
  bool force = false;
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  std::string summary = "Write a random-weight GGUF (weights ~N(0, 0.02)) of a model family that llama.cpp loads.\nShapes:";
  for (const auto& s : gguf::synth_shapes()) summary += std::string("\n  ") + s.name + ": " + s.summary;
  Args args("synth", summary, argc - 1, argv + 1);
  args.positional("SHAPE", &shape_s, "model shape (listed above)")
      .str("-o,--output", &out, "FILE", "output GGUF file (required)")
      .choice("--type", &type_s, gguf::quant_target_names(),
              "weight type or K-quant mix (default q4_0)")
      .integer("--seed", &seed, "random seed (default 1)")
      .str("--chat-template", &template_s, "FILE", "tokenizer.chat_template from FILE (default: the family's built-in one)")
      .size("-t,--threads", &threads, "threads (default: all cores)")
      .flag("-f,--force", &force, "replace FILE if it exists");
  args.parse();
  const gguf::SynthShape* shape = gguf::find_synth_shape(shape_s);
  if (!shape) {
    std::string names;
    for (const auto& s : gguf::synth_shapes()) names += std::string(names.empty() ? "" : ", ") + s.name;
    throw UsageError("unknown shape '" + shape_s + "' (one of " + names + ")");
  }
  if (out.empty()) throw UsageError("-o FILE is required");
  if (threads > 1024) throw UsageError("-t must be at most 1024");
  gguf::QuantTarget type = WeightType::q4_0;
  gguf::parse_quant_target(type_s, &type);

  const auto t0 = std::chrono::steady_clock::now();
  const std::string tmpl = read_template(template_s);
  const gguf::SynthStats s = gguf::synth_model(*shape, type, static_cast<uint64_t>(seed), out, static_cast<int>(threads),
                                               {.replace = force, .inputs = {}}, tmpl);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %s (%s) %s, %zu tensors, %.1f M parameters, %.1f MB of tensor data, %.2f s\n", out.c_str(), shape->name,
              shape->arch, type_s.c_str(), s.tensors, s.params / 1e6, s.bytes / 1e6, secs);
  if (!template_s.empty() || shape->chat_template) {
    std::printf("chat template: %s\n", template_s.empty() ? (std::string("built-in ") + shape->chat_template).c_str() : template_s.c_str());
  }
  return 0;
}

}  // namespace qmm::cli
