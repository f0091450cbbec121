// qmm quantize IN OUT TYPE: requantize a GGUF model (see src/gguf/quantize.h for the rules).
#include <cctype>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "args.h"
#include "core/blocks.h"
#include "gguf/gguf.h"
#include "gguf/quantize.h"
#include "verbs.h"

namespace qmm::cli {

std::string quantize_types() { return name_list(gguf::quant_target_names(), true); }

int cmd_quantize(int argc, char** argv) {
  std::string in, out, type_s;
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  bool verbose = false, force = false;
  const std::string types = quantize_types();
  Args args("quantize",
            "Requantize a GGUF model: 2-D weights whose rows are a multiple of its block become TYPE (token_embd\n"
            "included), 1-D tensors stay F32, others keep their type; ggml-exact rounding, metadata copied.",
            argc - 1, argv + 1);
  args.positional("IN", &in, "input GGUF file")
      .positional("OUT", &out, "output GGUF file")
      .positional("TYPE", &type_s, (types + " (llama-quantize's names; any case)").c_str())
      .size("-t,--threads", &threads, "threads (default: all cores)")
      .flag("-v,--verbose", &verbose, "print every tensor")
      .flag("-f,--force", &force, "replace OUT if it exists (never the input)");
  args.parse();
  gguf::QuantTarget target = WeightType::q4_0;
  if (!gguf::parse_quant_target(type_s, &target)) {  // any case: llama-quantize writes Q4_0, qmm q4_0
    throw UsageError("TYPE must be " + types + ", not '" + type_s + "'");
  }
  if (threads > 1024) throw UsageError("-t must be at most 1024");

  const auto t0 = std::chrono::steady_clock::now();
  const gguf::File f = gguf::File::open(in);
  if (verbose) {
    for (const auto& t : f.tensors()) {
      const uint32_t to = gguf::quantized_type(t, gguf::for_file(f, target));
      std::printf("  %-32s %-5s -> %-5s\n", t.name.c_str(), gguf::ggml_type_name(t.type), gguf::ggml_type_name(to));
    }
  }
  const gguf::QuantizeStats s = gguf::quantize_file(f, out, target, static_cast<int>(threads), {.replace = force, .inputs = {}});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s -> %s (%s): %zu tensors converted, %zu kept; tensor data %.2f MB -> %.2f MB; %.2f s\n", in.c_str(),
              out.c_str(), (std::string(type_name(target.type)) + (target.k_m ? "_m" : "")).c_str(), s.converted, s.kept, s.in_bytes / 1e6, s.out_bytes / 1e6, secs);
  return 0;
}

}  // namespace qmm::cli
