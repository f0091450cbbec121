#include "llm/synth.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "llm/chat_template.h"
#include "llm/gguf_writer.h"
#include "llm/quantize.h"
#include "llm/synth_vocab.h"

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

}  // namespace

const std::vector<SynthShape>& synth_shapes() {
  static const std::vector<SynthShape> shapes = {
      {"tiny", 64, 2, 4, 2, 192, 512, 512, 10000.0f, false, "dim 64, 2 layers, 4/2 heads, FFN 192, 512 SentencePiece tokens"},
      {"tiny-llama3", 64, 2, 4, 2, 192, 1024, 2048, 500000.0f, true,
       "tiny with Llama 3 features: 1024-token BPE vocabulary, rope_freqs, tied embeddings"},
      {"llama-1b", 2048, 16, 32, 8, 8192, 32000, 4096, 10000.0f, false,
       "dim 2048, 16 layers, 32/8 heads, FFN 8192, 32000 SentencePiece tokens"},
      {"llama-3.2-1b", 2048, 16, 32, 8, 8192, 128256, 131072, 500000.0f, true,
       "Llama 3.2 1B: llama-1b with 128256 BPE tokens, rope_freqs, tied embeddings"},
      {"llama-3.2-3b", 3072, 28, 24, 8, 8192, 128256, 131072, 500000.0f, true,
       "Llama 3.2 3B: dim 3072, 28 layers, 24/8 heads, FFN 8192, 128256 BPE tokens, tied embeddings"},
  };
  return shapes;
}

const SynthShape* find_synth_shape(const std::string& name) {
  for (const SynthShape& s : synth_shapes()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

SynthStats synth_model(const SynthShape& sh, WeightType type, uint64_t seed, const std::string& path, int threads,
                       const WriteOptions& opt) {
  const uint32_t head_dim = sh.dim / sh.heads, kv_dim = head_dim * sh.kv_heads;
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", std::string("qmm synth ") + sh.name);
  w.set_u32("general.file_type", llama_ftype(type));
  w.set_u32("general.quantization_version", 2);
  w.set_u32("llama.context_length", sh.context);
  w.set_u32("llama.embedding_length", sh.dim);
  w.set_u32("llama.block_count", sh.layers);
  w.set_u32("llama.feed_forward_length", sh.ffn);
  w.set_u32("llama.attention.head_count", sh.heads);
  w.set_u32("llama.attention.head_count_kv", sh.kv_heads);
  w.set_u32("llama.rope.dimension_count", head_dim);
  w.set_f32("llama.rope.freq_base", sh.rope_base);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_u32("llama.vocab_size", sh.vocab);

  const SynthVocab v = sh.llama3 ? make_bpe_vocab(sh.vocab, seed) : make_spm_vocab(sh.vocab, seed);
  w.set_string("tokenizer.ggml.model", v.model);
  if (sh.llama3) w.set_string("tokenizer.ggml.pre", "llama-bpe");
  w.set_string_array("tokenizer.ggml.tokens", v.tokens);
  if (!v.scores.empty()) w.set_f32_array("tokenizer.ggml.scores", v.scores);
  w.set_i32_array("tokenizer.ggml.token_type", v.token_type);
  if (!v.merges.empty()) w.set_string_array("tokenizer.ggml.merges", v.merges);
  w.set_u32("tokenizer.ggml.bos_token_id", v.bos);
  w.set_u32("tokenizer.ggml.eos_token_id", v.eos);
  if (v.has_unk) w.set_u32("tokenizer.ggml.unknown_token_id", v.unk);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
  // Llama 3.x shapes carry the Llama 3 chat template, so `qmm chat` / `qmm serve` run on them.
  if (sh.llama3) w.set_string("tokenizer.chat_template", *llm::builtin_chat_template("llama3"));

  SynthStats stats;
  ThreadPool pool(threads);
  std::vector<float> ones(sh.dim, 1.0f);
  const std::vector<float> rope = llama3_rope_factors(head_dim, sh.rope_base);
  const auto target = static_cast<uint32_t>(type);
  const uint32_t fallback = type == WeightType::f16 ? kF16 : kF32;
  uint64_t tensor_id = 0;

  // 1-D tensors from memory; 2-D ones generated row by row while the file is written.
  auto vec = [&](const std::string& name, const std::vector<float>& x) {
    w.add_tensor(name, kF32, {x.size()}, x.data(), x.size() * 4);
    stats.params += x.size();
  };
  auto mat = [&](const std::string& name, uint32_t k, uint32_t n) {
    const uint32_t t = k % ggml_block_size(target) == 0 ? target : fallback;
    const auto wt = static_cast<WeightType>(t);
    const size_t rb = ggml_row_bytes(t, k);
    const uint64_t id = tensor_id++;
    w.add_tensor(name, t, {k, n}, [&pool, wt, rb, id, k, seed](uint8_t* dst, size_t first, size_t rows) {
      constexpr size_t kGroup = 8;
      pool.parallel_for((rows + kGroup - 1) / kGroup, [&](size_t g, int) {
        float x[8192];  // one row; k <= 8192 (checked below)
        for (size_t r = g * kGroup; r < std::min(rows, (g + 1) * kGroup); ++r) {
          random_row(seed, id, first + r, 0.02f, x, k);
          quantize_rows(wt, x, dst + r * rb, 1, k);
        }
      });
    });
    stats.params += uint64_t{k} * n;
    stats.bytes += rb * n;
  };
  check_arg(sh.dim <= 8192 && sh.ffn <= 8192, "synth: rows longer than 8192 are not supported");

  mat("token_embd.weight", sh.dim, sh.vocab);
  vec("output_norm.weight", ones);
  if (!sh.llama3) mat("output.weight", sh.dim, sh.vocab);  // Llama 3.2 ties it to token_embd
  if (sh.llama3) vec("rope_freqs.weight", rope);
  for (uint32_t l = 0; l < sh.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    vec(p + "attn_norm.weight", ones);
    mat(p + "attn_q.weight", sh.dim, sh.dim);
    mat(p + "attn_k.weight", sh.dim, kv_dim);
    mat(p + "attn_v.weight", sh.dim, kv_dim);
    mat(p + "attn_output.weight", sh.dim, sh.dim);
    vec(p + "ffn_norm.weight", ones);
    mat(p + "ffn_gate.weight", sh.dim, sh.ffn);
    mat(p + "ffn_up.weight", sh.dim, sh.ffn);
    mat(p + "ffn_down.weight", sh.ffn, sh.dim);
  }
  stats.tensors = w.tensor_count();
  stats.bytes += static_cast<uint64_t>(sh.dim) * 4 * (1 + 2 * sh.layers) + (sh.llama3 ? rope.size() * 4 : 0);
  w.write(path, opt);
  return stats;
}

}  // namespace qmm::gguf
