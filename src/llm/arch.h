// The model families qmm runs, as data: what each one's forward pass does differently from
// Llama's (one table entry per family in arch.cpp; forward() reads the entry, never the name).
// The GGUF keys are `<name>.*` and the tensor names those of llama.cpp's converter.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
  bool qk_norm_whole = false;   // ... of the whole query / key projection instead, one gain per dimension (OLMoE)
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
  // Mixture of experts (moe.h): the FFN is a router ffn_gate_inp and expert_count SwiGLU experts
  // (3-D ffn_{gate,up,down}_exps), of which each token runs the expert_used_count with the highest
  // softmax probabilities, weighted by them.
  bool moe = false;
  bool moe_norm = false;        // the chosen experts' weights are renormalised to sum to 1 (Qwen 3 MoE)
  bool shared_expert = false;   // plus one always-run expert (ffn_*_shexp) gated by sigmoid(ffn_gate_inp_shexp · x) (Qwen 2 MoE)
  bool expert_ff_is_ff = false; // an expert's width is feed_forward_length (OLMoE: llama.cpp reads no expert_feed_forward_length)
  // How the family's files are written where the loader takes several forms (llama.cpp's
  // converter; `qmm synth` writes files so):
  bool qkv_fused_file = false;  // Q/K/V as one attn_qkv (Phi-3)
  bool qkv_bias_file = false;   // with attn_{q,k,v}.bias (Qwen 2)
  bool key_length_file = false; // attention.key_length / value_length even where head_dim = n_embd / n_head (Gemma)
  bool vocab_size_file = false; // <arch>.vocab_size (llama)
  float rms_eps = 1e-6f;        // the models' attention.layer_norm_rms_epsilon
};

// The tensors of a family's file, written once (arch.cpp) and read by the loader, the check
// that a file holds them and nothing else (model.cpp) and `qmm synth`.
enum class Role : uint8_t {
  token_embd, output_norm, output, rope_freqs, rope_long, rope_short, cls_output,  // outside the layers
  attn_norm, attn_qkv, attn_q, attn_k, attn_v, attn_q_norm, attn_k_norm, attn_output, post_attn_norm,
  ffn_norm, ffn_gate, ffn_up, ffn_down, post_ffn_norm,
  ffn_router, ffn_gate_exps, ffn_up_exps, ffn_down_exps,                        // MoE (moe.h)
  shexp_router, ffn_gate_shexp, ffn_up_shexp, ffn_down_shexp,                    // its shared expert
  scale, input_scale, bias,  // of the weight `of`: a per-tensor scale [1], an input scale (never read), a bias [n]
};

enum class Need : uint8_t {
  required,  // every file has it
  usual,     // optional; the family's files have it (Q/K/V biases of Qwen 2)
  optional,  // read when present
  unused,    // accepted and never read, any shape (llama.cpp loads it and does not use it)
};

struct TensorSpec {
  Role role;
  std::string name;             // without "blk.N." for a layer's
  std::vector<uint64_t> shape;  // GGUF order: [k, n] for a weight, [k, n, n_expert] for experts' (empty: any)
  Need need = Need::required;
  Role of = Role::token_embd;   // the weight a scale, input scale or bias belongs to
};

// The hyper-parameters the shapes are functions of.
struct TensorDims {
  uint64_t embd, vocab, q, kv, ff, head, rot;
  uint64_t expert = 0, ff_exp = 0, ff_shexp = 0;
};

// How a file stores Q/K/V (llama.cpp's create_tensor_qkv takes either): fused in attn_qkv or not,
// the biases fused in attn_qkv.bias or not.
struct QkvForm {
  bool fused = false, fused_bias = false;
};

// The tensors outside the layers; `long_rope`: LongRoPE's factor tensors instead of rope_freqs.
std::vector<TensorSpec> global_tensors(const ArchSpec& a, const TensorDims& d, bool long_rope);
// The tensors of one layer, in the order of the family's files.
std::vector<TensorSpec> layer_tensors(const ArchSpec& a, const TensorDims& d, QkvForm form);
// The entry of `role` (for scale / input_scale / bias: of the weight `of`), or nullptr.
const TensorSpec* find_tensor(const std::vector<TensorSpec>& ts, Role role, Role of = Role::token_embd);

// The entry for general.architecture `name`, or nullptr.
const ArchSpec* find_arch(std::string_view name);
// "llama, mistral, gemma2, ..." for error messages.
std::string supported_archs();

}  // namespace qmm::llm
