// The model families qmm runs, as data: what each one's forward pass does differently from
// Llama's (one table entry per family in arch.cpp; forward() reads the entry, never the name).
// The GGUF keys are `<name>.*` and the tensor names those of llama.cpp's converter.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace qmm::llm {

enum class Rope : uint8_t {
  normal,  // pairs (2i, 2i+1): Llama's GGUF (Q/K rows permuted by the converter)
  neox,    // pairs (i, i + n_rot/2): Qwen, Phi-3, Gemma
};

enum class Activation : uint8_t {
  swiglu,  // silu(gate) · up
  geglu,   // gelu(gate) · up, GELU's tanh approximation (Gemma)
};

// Every family: Q/K/V as separate attn_q/k/v or one fused attn_qkv (as the file has them, per
// layer), with optional biases (attn_{q,k,v}.bias or attn_qkv.bias) added after the projection,
// as llama.cpp's create_tensor_qkv takes them; optional per-tensor scales (one number, ".scale")
// multiplying the Q/K/V, attention output and output projections, as llama.cpp applies them in
// every family. llama.cpp also loads per-tensor input scales (".input_scale") and uses them in
// none of these families: they are accepted and not read. A file with any other tensor is refused.
struct ArchSpec {
  const char* name;             // general.architecture
  Rope rope = Rope::normal;
  Activation act = Activation::swiglu;
  bool embed_scale = false;     // x = embedding · √n_embd (Gemma)
  bool qk_norm = false;         // attn_{q,k}_norm: RMSNorm of every query / key head before RoPE (Qwen 3, Gemma 3)
  bool post_norms = false;      // post_attention_norm / post_ffw_norm on the attention / FFN output before the residual (Gemma 2/3)
  bool fused = false;           // ffn_up = [Wgate; Wup] in one tensor (Phi-3)
  bool rope_freqs = false;      // rope_freqs.weight: Llama 3's RoPE frequency factors (llama.cpp loads them for llama only)
  bool long_rope = false;       // rope_factors_short / _long: LongRoPE frequency factors (Phi-3; llama with rope.scaling.type longrope)
  uint32_t swa_pattern = 0;     // with attention.sliding_window: layer l is local unless l % pattern == pattern - 1 (the file's
                                // attention.sliding_window_pattern overrides it)
  float swa_rope_base = 0;      // the local layers' RoPE base, unscaled (0: the model's base and scale); rope.freq_base_swa overrides it
  uint32_t default_window = 0;  // the window when the file names none
  bool softcap = false;         // attn_logit_softcapping / final_logit_softcapping (Gemma 2)
  uint32_t big_layers = 0;      // a model of this many layers scales queries by 1/√(n_embd/n_head), not 1/√head_dim (Gemma 27B)
  // Optional tensors by llama.cpp's graph of the family:
  bool wo_bias = false;         // attn_output.bias
  bool ffn_scales = false;      // ffn_{gate,up,down}.scale multiply the FFN projections; without this flag llama.cpp
                                // loads them and leaves them unused, and so does qmm
  bool ffn_biases = false;      // ffn_{gate,up,down}.bias
  bool output_bias = false;     // output.bias
  bool cls_output = false;      // cls.output.weight: a reranking head llama.cpp loads and generation never uses
};

// The entry for general.architecture `name`, or nullptr.
const ArchSpec* find_arch(std::string_view name);
// "llama, mistral, gemma2, ..." for error messages.
std::string supported_archs();

}  // namespace qmm::llm
