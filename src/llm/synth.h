// Random-weight models of named shapes (`qmm synth`), written as GGUF files llama.cpp loads:
// each family's architecture keys and tensors (llama, gemma2, gemma3, qwen2, qwen3, phi3, and the
// mixture-of-experts qwen2moe, qwen3moe, olmoe with their 3-D expert tensors and an F32 router, as
// llama.cpp's quantizer leaves it), a
// synthetic but well-formed vocabulary with the family's special tokens, optionally its chat
// template, and weights ~N(0, 0.02) (llama norms 1, the output norm 8; the other families' norms 1 + N(0, 0.1) and
// biases N(0, 0.1), so that a misplaced norm or bias changes the output), streamed to the file
// and generated on several threads. The values depend only on the seed (not on the thread count).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/blocks.h"
#include "gguf/atomic_file.h"
#include "gguf/quantize.h"
#include "text/synth_vocab.h"

namespace qmm::gguf {

struct SynthShape {
  const char* name;
  const char* arch;             // general.architecture
  VocabFlavor vocab_flavor;
  uint32_t dim, layers, heads, kv_heads, head_dim, ffn, vocab, context;
  float rope_base;
  bool unit_norms = false;      // norm gains 1 (else 1 + N(0, 0.1))
  uint32_t sliding_window = 0;  // gemma: the local layers' attention window
  bool tied = false;            // no output.weight: the output projection is token_embd
  bool llama3 = false;          // Llama 3.x: rope_freqs (llama3 scaling)
  uint32_t long_rope_orig = 0;  // Phi-3 LongRoPE: rope_factors_short / _long, trained at this context (`context` is the long one)
  uint32_t experts = 0, experts_used = 0;  // Mixture of experts (qwen3moe, qwen2moe): expert_count, expert_used_count
  uint32_t expert_ffn = 0;      // expert_feed_forward_length
  uint32_t shared_ffn = 0;      // qwen2moe: the shared expert's width (expert_shared_feed_forward_length)
  const char* chat_template = nullptr;  // the family's built-in chat template (text/chat_template.h)
  const char* summary = "";
};

const std::vector<SynthShape>& synth_shapes();
const SynthShape* find_synth_shape(const std::string& name);  // nullptr if unknown

struct SynthStats {
  size_t tensors = 0;
  uint64_t params = 0;
  uint64_t bytes = 0;  // tensor data
};

// Writes the model to `path`. 2-D weights are `target`'s type (per tensor for a K-quant mix,
// gguf/quantize.h) when their rows fit its blocks, else F32 (F16 for an f16 model); 1-D
// tensors are F32. `chat_template` (if not empty) is written as tokenizer.chat_template.
SynthStats synth_model(const SynthShape& shape, const QuantTarget& target, uint64_t seed, const std::string& path, int threads,
                       const WriteOptions& opt = {}, const std::string& chat_template = "");

}  // namespace qmm::gguf
