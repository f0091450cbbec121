// One entry per family: llama.cpp's graph of the architecture (src/llama-model.cpp) in data.
#include "llm/arch.h"

#include <array>

namespace qmm::llm {
namespace {

constexpr std::array kArchs = {
    ArchSpec{.name = "llama", .rope_freqs = true, .wo_bias = true, .ffn_scales = true, .ffn_biases = true},
    ArchSpec{.name = "mistral", .rope_freqs = true, .wo_bias = true, .ffn_scales = true, .ffn_biases = true},
    ArchSpec{.name = "qwen2", .rope = Rope::neox, .wo_bias = true, .output_bias = true},
    ArchSpec{.name = "qwen3", .rope = Rope::neox, .qk_norm = true, .wo_bias = true, .ffn_scales = true, .cls_output = true},
    ArchSpec{.name = "phi3", .rope = Rope::neox, .fused = true, .long_rope = true, .wo_bias = true, .output_bias = true},
    ArchSpec{.name = "gemma", .rope = Rope::neox, .act = Activation::geglu, .embed_scale = true},
    ArchSpec{.name = "gemma2", .rope = Rope::neox, .act = Activation::geglu, .embed_scale = true, .post_norms = true,
             .swa_pattern = 2, .default_window = 4096, .softcap = true, .big_layers = 46},
    ArchSpec{.name = "gemma3", .rope = Rope::neox, .act = Activation::geglu, .embed_scale = true, .qk_norm = true,
             .post_norms = true, .swa_pattern = 6, .swa_rope_base = 10000.0f, .big_layers = 62},
};

}  // namespace

const ArchSpec* find_arch(std::string_view name) {
  for (const ArchSpec& a : kArchs) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

std::string supported_archs() {
  std::string s;
  for (const ArchSpec& a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

}  // namespace qmm::llm
