// Writes the seed corpus of fuzz_gguf into a directory: small valid GGUF files with every
// metadata value type, a tensor of every dequantizable type, other alignments, no tensors,
// and a tiny synthetic model. With "jinja": the seeds of fuzz_jinja (the built-in templates).
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/blocks.h"
#include "core/error.h"
#include "text/chat_template.h"
#include "gguf/gguf_writer.h"
#include "llm/synth.h"

using namespace qmm::gguf;

namespace {

void all_value_types(Writer& w) {
  w.set_string("general.architecture", "llama");
  w.set_u8("t.u8", 7);
  w.set_i32("t.i32", -3);
  w.set_u32("t.u32", 64);
  w.set_u64("t.u64", 1ull << 40);
  w.set_f32("t.f32", 0.5f);
  w.set_bool("t.bool", true);
  w.set_string_array("t.strings", std::vector<std::string>{"<unk>", "", "\xe2\x96\x81the"});
  w.set_f32_array("t.f32s", {0.0f, -1.0f});
  w.set_i32_array("t.i32s", {1, 2, 3});
}

// A complete Llama model small enough for the fuzzer to mutate (dim 32, one layer, 8 tokens),
// 2-D weights in `type`, a SentencePiece or a BPE vocabulary: seeds of fuzz_model.
void micro_model(const std::string& path, qmm::WeightType type, bool bpe) {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.embedding_length", 32);
  w.set_u32("llama.block_count", 1);
  w.set_u32("llama.feed_forward_length", 32);
  w.set_u32("llama.attention.head_count", 2);
  w.set_u32("llama.attention.head_count_kv", 1);
  w.set_u32("llama.context_length", 16);
  w.set_u32("llama.rope.dimension_count", 16);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_f32("llama.rope.freq_base", 10000.0f);
  w.set_string("tokenizer.ggml.model", bpe ? "gpt2" : "llama");
  if (bpe) {
    w.set_string("tokenizer.ggml.pre", "llama-bpe");
    w.set_string_array("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b", "ab", "\xc4\xa0", "\xc4\xa0" "a",
                                                                         "<|begin_of_text|>", "<|end_of_text|>", "c"});
    w.set_string_array("tokenizer.ggml.merges", std::vector<std::string>{"a b", "\xc4\xa0 a"});
    w.set_i32_array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 3, 3, 1});
    w.set_u32("tokenizer.ggml.bos_token_id", 5);
    w.set_u32("tokenizer.ggml.eos_token_id", 6);
  } else {
    w.set_string_array("tokenizer.ggml.tokens", std::vector<std::string>{"<unk>", "<s>", "</s>", "\xe2\x96\x81", "a", "b",
                                                                         "\xe2\x96\x81" "a", "<0x41>"});
    w.set_f32_array("tokenizer.ggml.scores", {0, 0, 0, -1, -2, -3, -0.5f, 0});
    w.set_i32_array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1, 1, 6});
    w.set_u32("tokenizer.ggml.bos_token_id", 1);
    w.set_u32("tokenizer.ggml.eos_token_id", 2);
  }
  static std::vector<std::vector<uint8_t>> keep;  // tensor bytes live until write()
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  auto tensor = [&](const std::string& name, uint64_t k, uint64_t n) {
    std::vector<float> x(k * n, 1.0f);
    if (n > 1) {
      for (float& v : x) v = normal(rng);
    }
    const qmm::WeightType t = n > 1 ? type : qmm::WeightType::f32;
    std::vector<uint8_t>& b = keep.emplace_back(qmm::row_bytes(t, k) * n);
    qmm::quantize_rows(t, x.data(), b.data(), n, k);
    const std::vector<uint64_t> shape = n > 1 ? std::vector<uint64_t>{k, n} : std::vector<uint64_t>{k};
    w.add_tensor(name, static_cast<uint32_t>(t), shape, b.data(), b.size());
  };
  tensor("token_embd.weight", 32, 8);
  tensor("output_norm.weight", 32, 1);
  tensor("blk.0.attn_norm.weight", 32, 1);
  tensor("blk.0.attn_q.weight", 32, 32);
  tensor("blk.0.attn_k.weight", 32, 16);
  tensor("blk.0.attn_v.weight", 32, 16);
  tensor("blk.0.attn_output.weight", 32, 32);
  tensor("blk.0.ffn_norm.weight", 32, 1);
  tensor("blk.0.ffn_gate.weight", 32, 32);
  tensor("blk.0.ffn_up.weight", 32, 32);
  tensor("blk.0.ffn_down.weight", 32, 32);
  if (!bpe) tensor("output.weight", 32, 8);  // BPE: tied to the embedding
  w.write(path);
}

// fuzz_jinja's seeds: the built-in chat templates.
int write_jinja_seeds(const std::string& dir) {
  for (const auto& name : qmm::llm::builtin_chat_template_names()) {
    std::ofstream(dir + "/" + name + ".jinja", std::ios::binary) << *qmm::llm::builtin_chat_template(name);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 3 && std::string(argv[2]) == "jinja")) {
    std::fprintf(stderr, "usage: make_seeds DIR [jinja]\n");
    return 2;
  }
  const std::string dir = argv[1];
  if (argc == 3) return write_jinja_seeds(dir);
  try {
    std::mt19937 rng(1);
    std::vector<uint8_t> bytes(1 << 16);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng() & 0x3b);  // small f16 scales, no NaN/inf exponents
    const uint32_t types[] = {kF32, kF16, kBF16, kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0, kQ4_K, kQ6_K};
    for (uint32_t align : {32u, 1u, 64u}) {
      Writer w;
      all_value_types(w);
      if (align != 32) w.set_u32("general.alignment", align);
      if (align == 1) w.set_string("t.odd", "xy");  // with alignment 1: data at an odd offset
      for (uint32_t t : types) {
        const uint64_t k = ggml_block_size(t) == 256 ? 256 : 32;
        w.add_tensor(std::string("w.") + ggml_type_name(t), t, {k, 2}, bytes.data(), ggml_row_bytes(t, k) * 2);
      }
      w.add_tensor("w.3d", kF32, {4, 3, 2}, bytes.data(), 96);
      w.add_tensor("w.4d", kF16, {2, 2, 2, 2}, bytes.data(), 32);
      w.write(dir + "/types_align" + std::to_string(align) + ".gguf");
    }
    Writer meta;
    all_value_types(meta);
    meta.write(dir + "/metadata_only.gguf");
    Writer empty;
    empty.write(dir + "/empty.gguf");
    synth_model(*find_synth_shape("tiny"), qmm::WeightType::q4_0, 1, dir + "/tiny_q4_0.gguf", 1);
    micro_model(dir + "/micro_f32.gguf", qmm::WeightType::f32, false);
    micro_model(dir + "/micro_q8_0.gguf", qmm::WeightType::q8_0, false);
    micro_model(dir + "/micro_q4_0_bpe.gguf", qmm::WeightType::q4_0, true);
    micro_model(dir + "/micro_f16_bpe.gguf", qmm::WeightType::f16, true);
  } catch (const qmm::Error& e) {
    std::fprintf(stderr, "make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
