#include "llm/synth.h"

#include <cmath>
#include <deque>
#include <numbers>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "llm/arch.h"
#include "text/chat_template.h"
#include "gguf/gguf_writer.h"
#include "gguf/quantize.h"
#include "text/synth_vocab.h"

namespace qmm::gguf {

namespace {

uint64_t mix(uint64_t z) {  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Row `row` of tensor `tensor`: k values ~N(0, sd) (Irwin-Hall of four 16-bit uniforms: the
// normal's mean and variance, bounded at ±3.5 sd).
void random_row(uint64_t seed, uint64_t tensor, uint64_t row, float sd, float* x, size_t k) {
  uint64_t s = mix(seed ^ mix(tensor * 0x9e3779b97f4a7c15ull + row));
  const float scale = sd / (65536.0f * std::sqrt(4.0f / 12.0f));
  for (size_t i = 0; i < k; ++i) {
    const uint64_t r = mix(s += 0x9e3779b97f4a7c15ull);
    const uint32_t sum = static_cast<uint32_t>(r & 0xffff) + ((r >> 16) & 0xffff) + ((r >> 32) & 0xffff) + (r >> 48);
    x[i] = (static_cast<float>(sum) - 2.0f * 65535.0f) * scale;
  }
}

// LongRoPE's per-frequency divisors for n_rot/2 pairs, growing with the wavelength as in
// Phi-3-mini-128k's config: short ones near 1, long ones up to 16.
std::vector<float> long_rope_factors(uint32_t n_rot, bool long_ctx) {
  std::vector<float> out(n_rot / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const double x = static_cast<double>(i) / static_cast<double>(out.size() - 1);
    out[i] = static_cast<float>(long_ctx ? 1 + 15 * x * x : 1 + 0.5 * x);
  }
  return out;
}

// Llama 3's per-frequency rope scaling (factor 32, low 1, high 4, original context 8192), as
// the factors llama.cpp divides the rotation frequencies by.
std::vector<float> llama3_rope_factors(uint32_t head_dim, float base) {
  const double factor = 32, low = 1, high = 4, old_ctx = 8192;
  const double low_wavelen = old_ctx / low, high_wavelen = old_ctx / high;
  std::vector<float> out;
  for (uint32_t i = 0; i < head_dim; i += 2) {
    const double freq = 1.0 / std::pow(static_cast<double>(base), static_cast<double>(i) / head_dim);
    const double wavelen = 2 * std::numbers::pi / freq;
    if (wavelen < high_wavelen) {
      out.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      out.push_back(static_cast<float>(factor));
    } else {
      const double smooth = (old_ctx / wavelen - low) / (high - low);
      out.push_back(static_cast<float>(1.0 / ((1 - smooth) / factor + smooth)));
    }
  }
  return out;
}

// The family's metadata keys, its vocabulary and chat template (as llama.cpp's converter writes them).
void write_keys(Writer& w, const SynthShape& sh, const llm::ArchSpec& spec, uint64_t seed, const std::string& chat_template) {
  const std::string a = std::string(sh.arch) + ".";
  w.set_u32(a + "context_length", sh.context);
  w.set_u32(a + "embedding_length", sh.dim);
  w.set_u32(a + "block_count", sh.layers);
  w.set_u32(a + "feed_forward_length", sh.ffn);
  w.set_u32(a + "attention.head_count", sh.heads);
  w.set_u32(a + "attention.head_count_kv", sh.kv_heads);
  if (sh.head_dim != sh.dim / sh.heads || spec.key_length_file) {
    w.set_u32(a + "attention.key_length", sh.head_dim);
    w.set_u32(a + "attention.value_length", sh.head_dim);
  }
  w.set_u32(a + "rope.dimension_count", sh.head_dim);
  w.set_f32(a + "rope.freq_base", sh.rope_base);
  w.set_f32(a + "attention.layer_norm_rms_epsilon", spec.rms_eps);
  if (sh.sliding_window) w.set_u32(a + "attention.sliding_window", sh.sliding_window);
  if (sh.long_rope_orig) {  // as llama.cpp's converter writes Phi-3's LongRoPE (the attention factor from the two contexts)
    w.set_u32(a + "rope.scaling.original_context_length", sh.long_rope_orig);
    const double scale = static_cast<double>(sh.context) / sh.long_rope_orig;
    w.set_f32(a + "rope.scaling.attn_factor", static_cast<float>(std::sqrt(1 + std::log(scale) / std::log(sh.long_rope_orig))));
  }
  if (spec.softcap) {
    w.set_f32(a + "attn_logit_softcapping", 50.0f);
    w.set_f32(a + "final_logit_softcapping", 30.0f);
  }
  if (spec.vocab_size_file) w.set_u32(a + "vocab_size", sh.vocab);
  if (sh.experts) {  // (as llama.cpp's converter writes Qwen's MoE keys)
    w.set_u32(a + "expert_count", sh.experts);
    w.set_u32(a + "expert_used_count", sh.experts_used);
    if (!spec.expert_ff_is_ff) w.set_u32(a + "expert_feed_forward_length", sh.expert_ffn);
    if (sh.shared_ffn) w.set_u32(a + "expert_shared_feed_forward_length", sh.shared_ffn);
  }

  const SynthVocab v = make_vocab(sh.vocab_flavor, sh.vocab, seed);
  w.set_string("tokenizer.ggml.model", v.model);
  if (!v.pre.empty()) w.set_string("tokenizer.ggml.pre", v.pre);
  w.set_string_array("tokenizer.ggml.tokens", v.tokens);
  if (!v.scores.empty()) w.set_f32_array("tokenizer.ggml.scores", v.scores);
  w.set_i32_array("tokenizer.ggml.token_type", v.token_type);
  if (!v.merges.empty()) w.set_string_array("tokenizer.ggml.merges", v.merges);
  w.set_u32("tokenizer.ggml.bos_token_id", v.bos);
  w.set_u32("tokenizer.ggml.eos_token_id", v.eos);
  if (v.has_unk) w.set_u32("tokenizer.ggml.unknown_token_id", v.unk);
  w.set_bool("tokenizer.ggml.add_bos_token", v.add_bos);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
  if (!v.add_space_prefix) w.set_bool("tokenizer.ggml.add_space_prefix", false);
  // The family's chat template (qmm's built-in one unless the caller gives one), so `qmm chat`
  // and `qmm serve` run on the file.
  if (!chat_template.empty()) {
    w.set_string("tokenizer.chat_template", chat_template);
  } else if (sh.chat_template) {
    w.set_string("tokenizer.chat_template", *llm::builtin_chat_template(sh.chat_template));
  }
}

}  // namespace

const std::vector<SynthShape>& synth_shapes() {
  using enum VocabFlavor;
  static const std::vector<SynthShape> shapes = {
      {.name = "tiny", .arch = "llama", .vocab_flavor = llama, .dim = 64, .layers = 2, .heads = 4, .kv_heads = 2,
       .head_dim = 16, .ffn = 192, .vocab = 512, .context = 512, .rope_base = 10000.0f, .unit_norms = true,
       .summary = "dim 64, 2 layers, 4/2 heads, FFN 192, 512 SentencePiece tokens"},
      {.name = "tiny-llama3", .arch = "llama", .vocab_flavor = llama3, .dim = 64, .layers = 2, .heads = 4, .kv_heads = 2,
       .head_dim = 16, .ffn = 192, .vocab = 1024, .context = 2048, .rope_base = 500000.0f, .unit_norms = true, .tied = true, .llama3 = true,
       .chat_template = "llama3",
       .summary = "tiny with Llama 3 features: 1024-token BPE vocabulary, rope_freqs, tied embeddings"},
      {.name = "tiny-k", .arch = "llama", .vocab_flavor = llama, .dim = 256, .layers = 2, .heads = 4, .kv_heads = 2,
       .head_dim = 64, .ffn = 512, .vocab = 512, .context = 512, .rope_base = 10000.0f, .unit_norms = true,
       .summary = "dim 256, 2 layers, 4/2 heads, FFN 512, 512 SentencePiece tokens (rows fit K-quant super-blocks)"},
      {.name = "tiny-gemma3", .arch = "gemma3", .vocab_flavor = gemma, .dim = 64, .layers = 6, .heads = 4, .kv_heads = 1,
       .head_dim = 32, .ffn = 192, .vocab = 1024, .context = 512, .rope_base = 1000000.0f, .sliding_window = 8,
       .tied = true, .chat_template = "gemma",
       .summary = "Gemma 3 features: 6 layers (5 local with a window of 8, 1 global), head size 32, q/k norms"},
      {.name = "tiny-gemma2", .arch = "gemma2", .vocab_flavor = gemma, .dim = 64, .layers = 4, .heads = 4, .kv_heads = 2,
       .head_dim = 32, .ffn = 192, .vocab = 1024, .context = 512, .rope_base = 10000.0f, .sliding_window = 8,
       .tied = true, .summary = "Gemma 2 features: 4 layers (local window 8 / global), logit soft-capping"},
      {.name = "tiny-qwen2", .arch = "qwen2", .vocab_flavor = qwen2, .dim = 64, .layers = 2, .heads = 4, .kv_heads = 2,
       .head_dim = 16, .ffn = 192, .vocab = 1024, .context = 512, .rope_base = 1000000.0f, .tied = true,
       .chat_template = "chatml", .summary = "Qwen 2.5 features: Q/K/V biases, Qwen BPE vocabulary, tied"},
      {.name = "tiny-qwen3", .arch = "qwen3", .vocab_flavor = qwen3, .dim = 64, .layers = 2, .heads = 4, .kv_heads = 2,
       .head_dim = 32, .ffn = 192, .vocab = 1024, .context = 512, .rope_base = 1000000.0f, .tied = true,
       .chat_template = "chatml", .summary = "Qwen 3 features: q/k norms, head size 32 (not dim / heads), tied"},
      {.name = "tiny-phi3", .arch = "phi3", .vocab_flavor = phi3, .dim = 96, .layers = 2, .heads = 3, .kv_heads = 3,
       .head_dim = 32, .ffn = 192, .vocab = 576, .context = 512, .rope_base = 10000.0f, .chat_template = "phi3",
       .summary = "Phi-3 features: fused attn_qkv and ffn_up (gate|up), Phi-3 special tokens"},
      {.name = "tiny-phi3-long", .arch = "phi3", .vocab_flavor = phi3, .dim = 96, .layers = 2, .heads = 3, .kv_heads = 3,
       .head_dim = 32, .ffn = 192, .vocab = 576, .context = 2048, .rope_base = 10000.0f, .long_rope_orig = 256,
       .chat_template = "phi3",
       .summary = "tiny-phi3 with LongRoPE (Phi-3-mini-128k): short / long RoPE factors, original context 256 of 2048"},
      {.name = "tiny-qwen3moe", .arch = "qwen3moe", .vocab_flavor = qwen3, .dim = 64, .layers = 2, .heads = 4, .kv_heads = 2,
       .head_dim = 32, .ffn = 192, .vocab = 1024, .context = 512, .rope_base = 1000000.0f, .experts = 16, .experts_used = 4,
       .expert_ffn = 64, .chat_template = "chatml",
       .summary = "Qwen 3 MoE features: 16 experts of width 64, 4 per token (weights renormalised), q/k norms"},
      {.name = "tiny-qwen2moe", .arch = "qwen2moe", .vocab_flavor = qwen2, .dim = 64, .layers = 2, .heads = 4, .kv_heads = 2,
       .head_dim = 16, .ffn = 192, .vocab = 1024, .context = 512, .rope_base = 1000000.0f, .experts = 12, .experts_used = 4,
       .expert_ffn = 64, .shared_ffn = 128, .chat_template = "chatml",
       .summary = "Qwen 2 MoE features: 12 experts of width 64, 4 per token, a gated shared expert of 128, Q/K/V biases"},
      {.name = "tiny-olmoe", .arch = "olmoe", .vocab_flavor = qwen2, .dim = 64, .layers = 2, .heads = 4, .kv_heads = 4,
       .head_dim = 16, .ffn = 64, .vocab = 1024, .context = 512, .rope_base = 10000.0f, .experts = 16, .experts_used = 4,
       .expert_ffn = 64, .chat_template = "chatml",
       .summary = "OLMoE features: 16 experts of width 64 (feed_forward_length), 4 per token, q/k norms over whole projections"},
      {.name = "llama-1b", .arch = "llama", .vocab_flavor = llama, .dim = 2048, .layers = 16, .heads = 32, .kv_heads = 8,
       .head_dim = 64, .ffn = 8192, .vocab = 32000, .context = 4096, .rope_base = 10000.0f, .unit_norms = true,
       .summary = "dim 2048, 16 layers, 32/8 heads, FFN 8192, 32000 SentencePiece tokens"},
      {.name = "llama-3.2-1b", .arch = "llama", .vocab_flavor = llama3, .dim = 2048, .layers = 16, .heads = 32,
       .kv_heads = 8, .head_dim = 64, .ffn = 8192, .vocab = 128256, .context = 131072, .rope_base = 500000.0f, .unit_norms = true,
       .tied = true, .llama3 = true, .chat_template = "llama3",
       .summary = "Llama 3.2 1B: llama-1b with 128256 BPE tokens, rope_freqs, tied embeddings"},
      {.name = "llama-3.2-3b", .arch = "llama", .vocab_flavor = llama3, .dim = 3072, .layers = 28, .heads = 24,
       .kv_heads = 8, .head_dim = 128, .ffn = 8192, .vocab = 128256, .context = 131072, .rope_base = 500000.0f, .unit_norms = true,
       .tied = true, .llama3 = true, .chat_template = "llama3",
       .summary = "Llama 3.2 3B: dim 3072, 28 layers, 24/8 heads, FFN 8192, 128256 BPE tokens, tied embeddings"},
      {.name = "gemma3-1b", .arch = "gemma3", .vocab_flavor = gemma, .dim = 1152, .layers = 26, .heads = 4, .kv_heads = 1,
       .head_dim = 256, .ffn = 6912, .vocab = 262144, .context = 32768, .rope_base = 1000000.0f, .sliding_window = 512,
       .tied = true, .chat_template = "gemma",
       .summary = "Gemma 3 1B: dim 1152, 26 layers, 4/1 heads of 256, FFN 6912, 262144 tokens, window 512"},
      {.name = "gemma2-2b", .arch = "gemma2", .vocab_flavor = gemma, .dim = 2304, .layers = 26, .heads = 8, .kv_heads = 4,
       .head_dim = 256, .ffn = 9216, .vocab = 256000, .context = 8192, .rope_base = 10000.0f, .sliding_window = 4096,
       .tied = true, .summary = "Gemma 2 2B: dim 2304, 26 layers, 8/4 heads of 256, FFN 9216, 256000 tokens"},
      {.name = "qwen2.5-0.5b", .arch = "qwen2", .vocab_flavor = qwen2, .dim = 896, .layers = 24, .heads = 14, .kv_heads = 2,
       .head_dim = 64, .ffn = 4864, .vocab = 151936, .context = 32768, .rope_base = 1000000.0f, .tied = true,
       .chat_template = "chatml", .summary = "Qwen 2.5 0.5B: dim 896, 24 layers, 14/2 heads, FFN 4864, 151936 tokens"},
      {.name = "qwen3-0.6b", .arch = "qwen3", .vocab_flavor = qwen3, .dim = 1024, .layers = 28, .heads = 16, .kv_heads = 8,
       .head_dim = 128, .ffn = 3072, .vocab = 151936, .context = 40960, .rope_base = 1000000.0f, .tied = true,
       .chat_template = "chatml", .summary = "Qwen 3 0.6B: dim 1024, 28 layers, 16/8 heads of 128, FFN 3072, 151936 tokens"},
      {.name = "phi3-mini", .arch = "phi3", .vocab_flavor = phi3, .dim = 3072, .layers = 32, .heads = 32, .kv_heads = 32,
       .head_dim = 96, .ffn = 8192, .vocab = 32064, .context = 4096, .rope_base = 10000.0f, .chat_template = "phi3",
       .summary = "Phi-3 mini (3.8B): dim 3072, 32 layers, 32 heads of 96, FFN 8192, 32064 tokens"},
      {.name = "qwen3moe-30b-a3b", .arch = "qwen3moe", .vocab_flavor = qwen3, .dim = 2048, .layers = 48, .heads = 32, .kv_heads = 4,
       .head_dim = 128, .ffn = 6144, .vocab = 151936, .context = 40960, .rope_base = 1000000.0f, .experts = 128,
       .experts_used = 8, .expert_ffn = 768, .chat_template = "chatml",
       .summary = "Qwen3-30B-A3B: dim 2048, 48 layers, 32/4 heads of 128, 128 experts of 768, 8 per token, 151936 tokens"},
      {.name = "qwen3moe-30b-a3b-12l", .arch = "qwen3moe", .vocab_flavor = qwen3, .dim = 2048, .layers = 12, .heads = 32,
       .kv_heads = 4, .head_dim = 128, .ffn = 6144, .vocab = 151936, .context = 40960, .rope_base = 1000000.0f, .experts = 128,
       .experts_used = 8, .expert_ffn = 768, .chat_template = "chatml",
       .summary = "qwen3moe-30b-a3b with 12 of its 48 layers (every width real; 4.6 GB in Q4_0, for benchmarks)"},
  };
  return shapes;
}

const SynthShape* find_synth_shape(const std::string& name) {
  for (const SynthShape& s : synth_shapes()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

SynthStats synth_model(const SynthShape& sh, const QuantTarget& target_in, uint64_t seed, const std::string& path, int threads,
                       const WriteOptions& opt, const std::string& chat_template) {
  const std::string arch = sh.arch;
  const llm::ArchSpec* spec_p = llm::find_arch(arch);
  check_arg(spec_p != nullptr, std::string("synth: no architecture '") + sh.arch + "'");
  const llm::ArchSpec& spec = *spec_p;
  const uint32_t q_dim = sh.heads * sh.head_dim, kv_dim = sh.head_dim * sh.kv_heads;
  Writer w;
  w.set_string("general.architecture", arch);
  w.set_string("general.name", std::string("qmm synth ") + sh.name);
  QuantTarget q = target_in;
  q.n_layer = sh.layers;
  q.has_output = !sh.tied;
  w.set_u32("general.file_type", llama_ftype(q));
  w.set_u32("general.quantization_version", 2);
  write_keys(w, sh, spec, seed, chat_template);

  SynthStats stats;
  ThreadPool pool(threads);
  const std::vector<float> rope = llama3_rope_factors(sh.head_dim, sh.rope_base);
  const uint32_t fallback = q.type == WeightType::f16 ? kF16 : kF32;
  uint64_t tensor_id = 0;

  // 1-D tensors from memory; 2-D ones generated row by row while the file is written.
  std::deque<std::vector<float>> vectors;  // (kept alive until the file is written)
  auto vec = [&](const std::string& name, std::vector<float> x) {
    vectors.push_back(std::move(x));
    const std::vector<float>& d = vectors.back();
    w.add_tensor(name, kF32, {d.size()}, d.data(), d.size() * 4);
    stats.params += d.size();
    stats.bytes += d.size() * 4;
  };
  // A norm's gains: 1 (llama), else 1 + N(0, 0.1); a bias: N(0, 0.1).
  auto random_vec = [&](size_t n, float mean) {
    std::vector<float> x(n);
    random_row(seed, tensor_id++, 0, 0.1f, x.data(), n);
    for (float& e : x) e += mean;
    return x;
  };
  auto norm = [&](const std::string& name, size_t n, float gain = 1.0f) {
    std::vector<float> g = sh.unit_norms ? std::vector<float>(n, 1.0f) : random_vec(n, 1.0f);
    for (float& e : g) e *= gain;
    vec(name, std::move(g));
  };
  // A weight of n rows of k values (times `experts` for an MoE expert tensor [k, n, experts]);
  // `sd` 0.02, the router's 0.1 (clearer choices of experts); the router stays F32.
  auto mat = [&](const std::string& name, uint32_t k, uint32_t n, uint32_t experts = 0, float sd = 0.02f) {
    const bool router = name.ends_with("ffn_gate_inp.weight");
    const uint32_t t = router ? kF32 : weight_type(name, k, q, fallback);
    const size_t rb = ggml_row_bytes(t, k);
    const uint64_t id = tensor_id++;
    std::vector<uint64_t> shape = {k, n};
    if (experts) shape.push_back(experts), n *= experts;
    w.add_tensor(name, t, shape, [&pool, t, rb, id, k, seed, sd](uint8_t* dst, size_t first, size_t rows) {
      constexpr size_t kGroup = 8;
      pool.parallel_for((rows + kGroup - 1) / kGroup, [&](size_t g, int) {
        std::vector<float> x(k);  // one row
        for (size_t r = g * kGroup; r < std::min(rows, (g + 1) * kGroup); ++r) {
          random_row(seed, id, first + r, sd, x.data(), k);
          quantize_ggml_rows(t, x.data(), dst + r * rb, 1, k);
        }
      });
    });
    stats.params += uint64_t{k} * n;
    stats.bytes += rb * n;
  };

  // The tensors of the family's schema (llm/arch.h) in its order: every required one, and the
  // optional ones the family's files have or the shape asks for.
  using llm::Role;
  const llm::TensorDims dims{.embd = sh.dim, .vocab = sh.vocab, .q = q_dim, .kv = kv_dim, .ff = sh.ffn, .head = sh.head_dim,
                             .rot = sh.head_dim, .expert = sh.experts, .ff_exp = sh.expert_ffn, .ff_shexp = sh.shared_ffn};
  auto emit = [&](const std::string& prefix, const llm::TensorSpec& t) {
    const std::string name = prefix + t.name;
    const auto k = static_cast<uint32_t>(t.shape.empty() ? 0 : t.shape[0]);
    switch (t.role) {
      case Role::output: if (!sh.tied) mat(name, k, sh.vocab); return;
      case Role::rope_freqs: if (sh.llama3) vec(name, rope); return;
      case Role::rope_long: case Role::rope_short:
        if (sh.long_rope_orig) vec(name, long_rope_factors(sh.head_dim, t.role == Role::rope_long));
        return;
      default: break;
    }
    if (t.need != llm::Need::required && t.need != llm::Need::usual) return;
    switch (t.role) {
      case Role::bias: case Role::shexp_router: vec(name, random_vec(k, 0.0f)); return;
      case Role::output_norm: norm(name, k, 8.0f); return;  // (see below)
      case Role::ffn_router: mat(name, k, static_cast<uint32_t>(t.shape[1]), 0, 0.1f); return;
      default: break;
    }
    if (t.shape.size() == 1) return norm(name, k);
    mat(name, k, static_cast<uint32_t>(t.shape[1]), t.shape.size() == 3 ? static_cast<uint32_t>(t.shape[2]) : 0);
  };
  // (The final norm's gain of 8 spreads the logits (sd ~ 0.16 · 8 at dim 64): greedy decoding
  // then has clear winners instead of near-ties that rounding differences could flip.)
  for (const llm::TensorSpec& t : llm::global_tensors(spec, dims, spec.long_rope)) emit("", t);
  for (uint32_t l = 0; l < sh.layers; ++l) {
    for (const llm::TensorSpec& t : llm::layer_tensors(spec, dims, {.fused = spec.qkv_fused_file})) {
      emit("blk." + std::to_string(l) + ".", t);
    }
  }
  stats.tensors = w.tensor_count();
  w.write(path, opt);
  return stats;
}

}  // namespace qmm::gguf
