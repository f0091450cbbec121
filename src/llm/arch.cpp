// One entry per family: llama.cpp's graph of the architecture (src/llama-model.cpp) in data.
#include "llm/arch.h"

#include <array>

namespace qmm::llm {
namespace {

constexpr std::array kArchs = {
    ArchSpec{.name = "llama", .rope_freqs = true, .wo_bias = true, .ffn_scales = true, .ffn_biases = true,
             .vocab_size_file = true, .rms_eps = 1e-5f},
    ArchSpec{.name = "mistral", .rope_freqs = true, .wo_bias = true, .ffn_scales = true, .ffn_biases = true, .rms_eps = 1e-5f},
    ArchSpec{.name = "qwen2", .rope = Rope::neox, .wo_bias = true, .output_bias = true, .qkv_bias_file = true},
    ArchSpec{.name = "qwen3", .rope = Rope::neox, .qk_norm = true, .wo_bias = true, .ffn_scales = true, .cls_output = true},
    ArchSpec{.name = "phi3", .rope = Rope::neox, .fused = true, .long_rope = true, .wo_bias = true, .output_bias = true,
             .qkv_fused_file = true, .rms_eps = 1e-5f},
    ArchSpec{.name = "gemma", .rope = Rope::neox, .act = Activation::geglu, .embed_scale = true, .key_length_file = true},
    ArchSpec{.name = "gemma2", .rope = Rope::neox, .act = Activation::geglu, .embed_scale = true, .post_norms = true,
             .swa_pattern = 2, .default_window = 4096, .softcap = true, .big_layers = 46, .key_length_file = true},
    ArchSpec{.name = "gemma3", .rope = Rope::neox, .act = Activation::geglu, .embed_scale = true, .qk_norm = true,
             .post_norms = true, .swa_pattern = 6, .swa_rope_base = 10000.0f, .big_layers = 62, .key_length_file = true},
    ArchSpec{.name = "qwen2moe", .rope = Rope::neox, .moe = true, .shared_expert = true, .qkv_bias_file = true},
    ArchSpec{.name = "qwen3moe", .rope = Rope::neox, .qk_norm = true, .moe = true, .moe_norm = true},
    ArchSpec{.name = "olmoe", .rope = Rope::neox, .qk_norm = true, .qk_norm_whole = true, .moe = true, .expert_ff_is_ff = true},
};

// The tensors of a list under construction; a weight's per-tensor scale, input scale and bias
// follow it.
struct List {
  std::vector<TensorSpec> t;
  void add(Role r, const char* name, std::vector<uint64_t> shape, Need need = Need::required, Role of = Role::token_embd) {
    t.push_back({r, name, std::move(shape), need, of});
  }
  // The scale is applied (every family's graph applies Q/K/V, attention output and output
  // scales; the FFN's only where the family's does), the input scale never; a bias of `bias`
  // columns where the family has one.
  void extras(Role w, const std::string& base, bool scale_used, uint64_t bias) {
    t.push_back({Role::scale, base + ".scale", {1}, scale_used ? Need::optional : Need::unused, w});
    t.push_back({Role::input_scale, base + ".input_scale", {}, Need::unused, w});
    if (bias) t.push_back({Role::bias, base + ".bias", {bias}, Need::optional, w});
  }
};

}  // namespace

std::vector<TensorSpec> global_tensors(const ArchSpec& a, const TensorDims& d, bool long_rope) {
  List l;
  l.add(Role::token_embd, "token_embd.weight", {d.embd, d.vocab});
  l.add(Role::output_norm, "output_norm.weight", {d.embd});
  l.add(Role::output, "output.weight", {d.embd, d.vocab}, Need::optional);  // (absent: tied to token_embd)
  l.t.push_back({Role::scale, "output.scale", {1}, Need::optional, Role::output});
  if (a.output_bias) l.t.push_back({Role::bias, "output.bias", {d.vocab}, Need::optional, Role::output});
  if (a.cls_output) l.add(Role::cls_output, "cls.output.weight", {}, Need::unused);
  if (long_rope) {
    l.add(Role::rope_long, "rope_factors_long.weight", {d.rot / 2}, Need::optional);
    l.add(Role::rope_short, "rope_factors_short.weight", {d.rot / 2}, Need::optional);
  } else if (a.rope_freqs) {
    l.add(Role::rope_freqs, "rope_freqs.weight", {d.rot / 2}, Need::optional);
  }
  return l.t;
}

std::vector<TensorSpec> layer_tensors(const ArchSpec& a, const TensorDims& d, QkvForm form) {
  const uint64_t embd = d.embd, q = d.q, kv = d.kv, ff = d.ff;
  List l;
  l.add(Role::attn_norm, "attn_norm.weight", {embd});
  if (form.fused) {
    l.add(Role::attn_qkv, "attn_qkv.weight", {embd, q + 2 * kv});
    if (form.fused_bias) l.t.push_back({Role::bias, "attn_qkv.bias", {q + 2 * kv}, Need::optional, Role::attn_qkv});
    l.extras(Role::attn_qkv, "attn_qkv", true, 0);
  } else {
    l.add(Role::attn_q, "attn_q.weight", {embd, q});
    l.add(Role::attn_k, "attn_k.weight", {embd, kv});
    l.add(Role::attn_v, "attn_v.weight", {embd, kv});
    l.extras(Role::attn_q, "attn_q", true, 0);
    l.extras(Role::attn_k, "attn_k", true, 0);
    l.extras(Role::attn_v, "attn_v", true, 0);
  }
  if (!form.fused || !form.fused_bias) {  // (separate biases may follow a fused weight)
    const Need need = a.qkv_bias_file ? Need::usual : Need::optional;
    l.t.push_back({Role::bias, "attn_q.bias", {q}, need, Role::attn_q});
    l.t.push_back({Role::bias, "attn_k.bias", {kv}, need, Role::attn_k});
    l.t.push_back({Role::bias, "attn_v.bias", {kv}, need, Role::attn_v});
  }
  if (a.qk_norm) {
    l.add(Role::attn_q_norm, "attn_q_norm.weight", {a.qk_norm_whole ? q : d.head});
    l.add(Role::attn_k_norm, "attn_k_norm.weight", {a.qk_norm_whole ? kv : d.head});
  }
  l.add(Role::attn_output, "attn_output.weight", {q, embd});
  l.extras(Role::attn_output, "attn_output", true, a.wo_bias ? embd : 0);
  if (a.post_norms) l.add(Role::post_attn_norm, "post_attention_norm.weight", {embd});
  l.add(Role::ffn_norm, "ffn_norm.weight", {embd});
  if (a.moe) {  // the router and the experts' 3-D tensors (moe.h)
    const uint64_t ne = d.expert, fe = d.ff_exp, fs = d.ff_shexp;
    l.add(Role::ffn_router, "ffn_gate_inp.weight", {embd, ne});
    l.add(Role::ffn_gate_exps, "ffn_gate_exps.weight", {embd, fe, ne});
    l.add(Role::ffn_up_exps, "ffn_up_exps.weight", {embd, fe, ne});
    l.add(Role::ffn_down_exps, "ffn_down_exps.weight", {fe, embd, ne});
    if (a.shared_expert) {
      l.add(Role::shexp_router, "ffn_gate_inp_shexp.weight", {embd});
      l.add(Role::ffn_gate_shexp, "ffn_gate_shexp.weight", {embd, fs});
      l.add(Role::ffn_up_shexp, "ffn_up_shexp.weight", {embd, fs});
      l.add(Role::ffn_down_shexp, "ffn_down_shexp.weight", {fs, embd});
    }
  } else {
    if (a.fused) {
      l.add(Role::ffn_up, "ffn_up.weight", {embd, 2 * ff});
      l.extras(Role::ffn_up, "ffn_up", a.ffn_scales, a.ffn_biases ? 2 * ff : 0);
    } else {
      l.add(Role::ffn_gate, "ffn_gate.weight", {embd, ff});
      l.add(Role::ffn_up, "ffn_up.weight", {embd, ff});
      l.extras(Role::ffn_gate, "ffn_gate", a.ffn_scales, a.ffn_biases ? ff : 0);
      l.extras(Role::ffn_up, "ffn_up", a.ffn_scales, a.ffn_biases ? ff : 0);
    }
    l.add(Role::ffn_down, "ffn_down.weight", {ff, embd});
    l.extras(Role::ffn_down, "ffn_down", a.ffn_scales, a.ffn_biases ? embd : 0);
  }
  if (a.post_norms) l.add(Role::post_ffn_norm, "post_ffw_norm.weight", {embd});
  return l.t;
}

const TensorSpec* find_tensor(const std::vector<TensorSpec>& ts, Role role, Role of) {
  const bool extra = role == Role::scale || role == Role::input_scale || role == Role::bias;
  for (const TensorSpec& t : ts) {
    if (t.role == role && (!extra || t.of == of)) return &t;
  }
  return nullptr;
}

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
