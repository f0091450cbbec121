// qmm synth (src/llm/synth.h): the tiny shapes, re-read; keys llama.cpp needs, well-formed
// vocabularies, shapes, weight statistics, determinism across thread counts.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <unordered_set>

#include "gguf_test_util.h"
#include "gguf/gguf.h"
#include "llm/synth.h"
#include "text/synth_vocab.h"

namespace qmm {
namespace {

using namespace gguf;

const char* kRequiredKeys[] = {
    "general.architecture", "general.file_type", "llama.context_length", "llama.embedding_length",
    "llama.block_count", "llama.feed_forward_length", "llama.attention.head_count", "llama.attention.head_count_kv",
    "llama.rope.dimension_count", "llama.rope.freq_base", "llama.attention.layer_norm_rms_epsilon",
    "llama.vocab_size", "tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
    "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"};

TEST(Synth, Shapes) {
  ASSERT_NE(find_synth_shape("llama-1b"), nullptr);
  const SynthShape& l1 = *find_synth_shape("llama-1b");
  EXPECT_EQ(l1.dim, 2048u);
  EXPECT_EQ(l1.layers, 16u);
  EXPECT_EQ(l1.ffn, 8192u);
  EXPECT_EQ(l1.heads, 32u);
  EXPECT_EQ(l1.kv_heads, 8u);
  EXPECT_EQ(l1.vocab, 32000u);
  EXPECT_EQ(find_synth_shape("llama-3.2-1b")->vocab, 128256u);
  EXPECT_TRUE(find_synth_shape("llama-3.2-1b")->llama3);
  EXPECT_EQ(find_synth_shape("llama-3.2-3b")->dim, 3072u);
  EXPECT_EQ(find_synth_shape("llama-3.2-3b")->layers, 28u);
  EXPECT_EQ(find_synth_shape("llama-3.2-3b")->heads, 24u);
  EXPECT_EQ(find_synth_shape("nope"), nullptr);
}

TEST(Synth, TinyQ4_0) {
  const std::string path = test::temp_path("tiny.gguf");
  const SynthStats st = synth_model(*find_synth_shape("tiny"), WeightType::q4_0, 7, path, 2);
  const File f = File::open(path);
  for (const char* k : kRequiredKeys) EXPECT_TRUE(f.has(k)) << k;
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_u64("general.file_type"), 2u);
  EXPECT_EQ(f.get_u64("llama.embedding_length"), 64u);
  EXPECT_EQ(f.get_u64("llama.block_count"), 2u);
  EXPECT_EQ(f.get_u64("llama.attention.head_count"), 4u);
  EXPECT_EQ(f.get_u64("llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(f.get_u64("llama.rope.dimension_count"), 16u);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(st.tensors, 3u + 2u * 9u);
  EXPECT_EQ(f.tensors().size(), st.tensors);
  EXPECT_EQ(f.tensor("token_embd.weight").type, kQ4_0);
  EXPECT_EQ(f.tensor("token_embd.weight").shape, (std::vector<uint64_t>{64, 512}));
  EXPECT_EQ(f.tensor("output.weight").type, kQ4_0);
  EXPECT_EQ(f.tensor("blk.1.attn_k.weight").shape, (std::vector<uint64_t>{64, 32}));
  EXPECT_EQ(f.tensor("blk.1.ffn_down.weight").shape, (std::vector<uint64_t>{192, 64}));
  EXPECT_EQ(f.tensor("blk.1.ffn_down.weight").type, kQ4_0);
  EXPECT_EQ(f.tensor("blk.0.ffn_norm.weight").type, kF32);

  // Vocabulary: <unk> <s> </s>, byte tokens, unique pieces, scores and types per token.
  const auto tok = f.get_string_array("tokenizer.ggml.tokens");
  const auto types = f.get_i32_array("tokenizer.ggml.token_type");
  const auto scores = f.get_f32_array("tokenizer.ggml.scores");
  ASSERT_EQ(tok.size(), 512u);
  ASSERT_EQ(types.size(), 512u);
  ASSERT_EQ(scores.size(), 512u);
  EXPECT_EQ(tok[0], "<unk>");
  EXPECT_EQ(tok[1], "<s>");
  EXPECT_EQ(tok[2], "</s>");
  EXPECT_EQ(tok[3], "<0x00>");
  EXPECT_EQ(tok[3 + 0x41], "<0x41>");
  EXPECT_EQ(tok[258], "<0xFF>");
  EXPECT_EQ(types[0], 2);
  EXPECT_EQ(types[1], 3);
  EXPECT_EQ(types[100], 6);
  EXPECT_EQ(types[400], 1);
  EXPECT_EQ(std::set<std::string_view>(tok.begin(), tok.end()).size(), tok.size());
  // Every normal piece of more than one character is two earlier pieces joined.
  std::unordered_set<std::string_view> earlier;
  for (size_t i = 259; i < tok.size(); ++i) {
    const std::string_view t = tok[i];
    bool single = t.size() == 1 || t == "\xe2\x96\x81", split = false;
    for (size_t c = 1; c < t.size() && !single && !split; ++c) split = earlier.count(t.substr(0, c)) && earlier.count(t.substr(c));
    EXPECT_TRUE(single || split) << t;
    EXPECT_LT(scores[i], 0.0f);
    if (i > 260) {
      EXPECT_LT(scores[i], scores[i - 1]);
    }
    earlier.insert(t);
  }
}

TEST(Synth, TinyLlama3Vocabulary) {
  const std::string path = test::temp_path("tl3.gguf");
  synth_model(*find_synth_shape("tiny-llama3"), WeightType::q8_0, 3, path, 1);
  const File f = File::open(path);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "llama-bpe");
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);  // tied embeddings
  ASSERT_NE(f.find_tensor("rope_freqs.weight"), nullptr);
  EXPECT_EQ(f.tensor("rope_freqs.weight").shape, (std::vector<uint64_t>{8}));
  EXPECT_NEAR(f.get_f64("llama.rope.freq_base"), 500000.0, 1e-3);
  const auto tok = f.get_string_array("tokenizer.ggml.tokens");
  const auto merges = f.get_string_array("tokenizer.ggml.merges");
  const auto types = f.get_i32_array("tokenizer.ggml.token_type");
  ASSERT_EQ(tok.size(), 1024u);
  EXPECT_EQ(merges.size(), 1024u - 512u);
  EXPECT_EQ(tok[f.get_u64("tokenizer.ggml.bos_token_id")], "<|begin_of_text|>");
  EXPECT_EQ(tok[f.get_u64("tokenizer.ggml.eos_token_id")], "<|eot_id|>");
  EXPECT_EQ(tok[1023], "<|reserved_special_token_247|>");
  EXPECT_EQ(types[768], 3);
  EXPECT_EQ(types[767], 1);
  EXPECT_EQ(tok[' '], gpt2_byte_symbol(' '));
  EXPECT_EQ(gpt2_byte_symbol(' '), "\xc4\xa0");  // Ġ
  EXPECT_EQ(gpt2_byte_symbol('a'), "a");
  EXPECT_EQ(gpt2_byte_symbol(0), "\xc4\x80");  // U+0100
  std::unordered_set<std::string_view> seen(tok.begin(), tok.begin() + 256);
  EXPECT_EQ(seen.size(), 256u);
  for (size_t i = 0; i < merges.size(); ++i) {  // merge i makes token 256 + i from earlier tokens
    const std::string_view m = merges[i];
    const size_t sp = m.find(' ');
    ASSERT_NE(sp, std::string_view::npos) << m;
    EXPECT_EQ(m.find(' ', sp + 1), std::string_view::npos) << m;
    EXPECT_TRUE(seen.count(m.substr(0, sp)) && seen.count(m.substr(sp + 1))) << m;
    EXPECT_EQ(std::string(m.substr(0, sp)) + std::string(m.substr(sp + 1)), tok[256 + i]);
    EXPECT_TRUE(seen.insert(tok[256 + i]).second) << tok[256 + i];
  }
}

TEST(Synth, WeightsAreDeterministicAndScaled) {
  const SynthShape& tiny = *find_synth_shape("tiny");
  const std::string a = test::temp_path("a.gguf"), b = test::temp_path("b.gguf"), c = test::temp_path("c.gguf");
  synth_model(tiny, WeightType::f32, 5, a, 1);
  synth_model(tiny, WeightType::f32, 5, b, 2);
  synth_model(tiny, WeightType::f32, 6, c, 2);
  EXPECT_EQ(test::read_bytes(a), test::read_bytes(b));  // thread count does not matter
  EXPECT_NE(test::read_bytes(a), test::read_bytes(c));
  const File f = File::open(a);
  const auto& t = f.tensor("blk.0.ffn_gate.weight");
  const float* x = reinterpret_cast<const float*>(t.data);
  const size_t n = t.bytes / 4;
  double sum = 0, sq = 0;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(x[i]));
    sum += x[i];
    sq += x[i] * x[i];
  }
  EXPECT_NEAR(sum / n, 0.0, 0.002);
  EXPECT_NEAR(std::sqrt(sq / n), 0.02, 0.001);
  const float* norm = reinterpret_cast<const float*>(f.tensor("output_norm.weight").data);
  EXPECT_EQ(norm[0], 8.0f);  // spreads the logits
  EXPECT_EQ(*reinterpret_cast<const float*>(f.tensor("blk.0.ffn_norm.weight").data), 1.0f);
  EXPECT_EQ(f.get_u64("general.file_type"), 0u);
}

}  // namespace
}  // namespace qmm
