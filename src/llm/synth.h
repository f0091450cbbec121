// Random-weight Llama models of named shapes (`qmm synth`), written as GGUF files llama.cpp
// loads: the `llama` architecture keys, a synthetic but well-formed vocabulary, and weights
// ~N(0, 0.02) (norms 1), streamed to the file and generated on several threads. The values
// depend only on the seed (not on the thread count).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/blocks.h"
#include "llm/atomic_file.h"

namespace qmm::gguf {

struct SynthShape {
  const char* name;
  uint32_t dim, layers, heads, kv_heads, ffn, vocab, context;
  float rope_base;
  bool llama3;         // Llama 3.x: gpt2 BPE vocabulary, rope_freqs (llama3 scaling), tied embeddings, chat template
  const char* summary;
};

const std::vector<SynthShape>& synth_shapes();
const SynthShape* find_synth_shape(const std::string& name);  // nullptr if unknown

struct SynthStats {
  size_t tensors = 0;
  uint64_t params = 0;
  uint64_t bytes = 0;  // tensor data
};

// Writes the model to `path`. 2-D weights are `type` when their rows fit its blocks, else
// F32 (F16 for an f16 model); 1-D tensors are F32.
SynthStats synth_model(const SynthShape& shape, WeightType type, uint64_t seed, const std::string& path, int threads,
                       const WriteOptions& opt = {});

}  // namespace qmm::gguf
