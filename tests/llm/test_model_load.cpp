// Loading trusts nothing in the file: the layers block_count claims must all be there with
// the shapes the hyper-parameters give (checked before anything sized by the metadata is
// allocated), no layer beyond them, metadata that makes the math meaningless is an error,
// token ids name real tokens, and the model keeps running when its file is truncated.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "../temp_dirs.h"
#include "core/error.h"
#include "gguf/dequant.h"
#include "llm/model.h"
#include "llm/sampler.h"
#include "llm/synth.h"
#include "text/tokenizer.h"
#include "model_copy.h"
#include "test_models.h"

namespace qmm::llm {
namespace {

// Files of this process only: ctest runs other tests of this binary (and other build trees' runs)
// at the same time, and one that rewrote a shared model file changed its mtime under another's
// pack-cache check (Moe.PackCacheHoldsTheExperts failed so in CI).
std::string temp(const std::string& name) {
  static const std::string dir = test::temp_dir("qmm_load");
  return dir + "/" + name;
}

// The message of the error loading `path` throws ("" if it loads).
std::string load_error(const std::string& path) {
  Context ctx(1);
  try {
    const Model m = Model::load(path, {}, ctx.pool());
    (void)Tokenizer::from_gguf(m.file());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

::testing::AssertionResult fails_with(const std::string& path, const std::string& text) {
  const std::string msg = load_error(path);
  if (!msg.empty() && msg.find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "error '" << msg << "' does not contain '" << text << "'";
}

size_t peak_rss() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<size_t>(ru.ru_maxrss) * 1024;
}

TEST(ModelLoad, BlockCountBeyondTheTensorsIsRefusedBeforeAllocating) {
  QMM_REQUIRE_STORIES260K();
  for (uint32_t layers : {6u, 5000000u, 0x7fffffffu}) {
    test::ModelCopy m(test::stories260k_path());
    m.writer().set_u32("llama.block_count", layers);
    const std::string path = m.write(temp("layers.gguf"));
    const size_t before = peak_rss();
    EXPECT_TRUE(fails_with(path, "block_count " + std::to_string(layers) + " needs 9 tensors per layer"));
    EXPECT_LT(peak_rss() - before, size_t{64} << 20) << layers << " layers";
  }
}

TEST(ModelLoad, UnknownArchitectureIsOneLineNamingItAndTheSupportedOnes) {
  QMM_REQUIRE_STORIES260K();
  test::ModelCopy m(test::stories260k_path());
  m.writer().set_string("general.architecture", "falcon");
  const std::string msg = load_error(m.write(temp("falcon.gguf")));
  EXPECT_NE(msg.find("architecture 'falcon' is not supported (supported: llama, mistral, qwen2, qwen3, phi3, gemma, gemma2, gemma3, qwen2moe, qwen3moe, olmoe)"),
            std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

// llama.cpp refuses a pre-tokenizer it does not know ("unknown pre-tokenizer type"); a missing
// key is its "default".
TEST(ModelLoad, UnknownPreTokenizerIsOneLineNamingItAndTheSupportedOnes) {
  const std::string src = temp("pre_src.gguf");
  gguf::synth_model(*gguf::find_synth_shape("tiny-qwen2"), WeightType::f32, 1, src, 1);
  test::ModelCopy m(src);
  m.writer().set_string("tokenizer.ggml.pre", "qwen9");
  const std::string msg = load_error(m.write(temp("pre_qwen9.gguf")));
  EXPECT_NE(msg.find("unknown pre-tokenizer tokenizer.ggml.pre = 'qwen9' (supported: default, llama3, "), std::string::npos) << msg;
  EXPECT_NE(msg.find("qwen2"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  test::ModelCopy none(src);
  none.writer().remove("tokenizer.ggml.pre");
  const std::string path = none.write(temp("pre_none.gguf"));
  EXPECT_EQ(load_error(path), "");
  EXPECT_NE(Tokenizer::from_gguf(gguf::File::open(path)).description().find("llama.cpp's default pre-tokenizer"), std::string::npos);
}

TEST(ModelLoad, EachFamilysLayerTensorsAreCheckedUpFront) {
  // A Gemma 3 file without a layer's post-FFN norm, a Phi-3 file without its fused QKV (nor
  // separate Q/K/V), a Qwen 2 file without a K projection (its biases are optional, as in llama.cpp).
  for (const auto& [shape, tensor] : {std::pair{"tiny-gemma3", "blk.5.post_ffw_norm.weight"}, {"tiny-phi3", "blk.1.attn_qkv.weight"},
                                      {"tiny-qwen2", "blk.0.attn_k.weight"}, {"tiny-qwen3", "blk.1.attn_q_norm.weight"}}) {
    const std::string src = temp(std::string(shape) + ".gguf");
    gguf::synth_model(*gguf::find_synth_shape(shape), WeightType::q8_0, 1, src, 1, {.replace = true, .inputs = {}});
    EXPECT_EQ(load_error(src), "") << shape;
    test::ModelCopy m(src, [&](const std::string& name) { return name == tensor ? "" : name; });
    const std::string missing = shape == std::string("tiny-phi3")
                                    ? "tensor 'blk.1.attn_q.weight' missing (nor is Q/K/V fused in 'blk.1.attn_qkv.weight')"
                                    : "tensor '" + std::string(tensor) + "' missing";
    EXPECT_TRUE(fails_with(m.write(temp("missing.gguf")), missing)) << shape;
  }
}

TEST(ModelLoad, MoreLayersThanClaimedIsAnError) {
  QMM_REQUIRE_STORIES260K();
  test::ModelCopy m(test::stories260k_path());
  m.writer().set_u32("llama.block_count", 4);  // the file holds 5
  EXPECT_TRUE(fails_with(m.write(temp("fewer.gguf")), "tensor 'blk.4."));
  test::ModelCopy odd(test::stories260k_path());
  odd.add_f32("blk.x.attn_norm.weight", {64}, 1.0f);
  EXPECT_TRUE(fails_with(odd.write(temp("odd_layer.gguf")), "tensor 'blk.x.attn_norm.weight' is not part of layers 0..4"));
}

TEST(ModelLoad, EveryLayerTensorIsCheckedUpFront) {
  QMM_REQUIRE_STORIES260K();
  test::ModelCopy m(test::stories260k_path(), [](const std::string& n) {
    return n == "blk.4.ffn_down.weight" ? "" : n;
  });
  m.add_f32("blk.4.ffn_down.weight", {64, 172}, 0.0f);  // transposed
  EXPECT_TRUE(fails_with(m.write(temp("shape.gguf")), "tensor 'blk.4.ffn_down.weight' has shape [64, 172], expected [172, 64]"));
  test::ModelCopy gone(test::stories260k_path(), [](const std::string& n) { return n == "blk.2.attn_v.weight" ? "" : n; });
  EXPECT_TRUE(fails_with(gone.write(temp("gone.gguf")), "tensor 'blk.2.attn_v.weight' missing"));
}

TEST(ModelLoad, MeaninglessHyperParametersAreErrors) {
  QMM_REQUIRE_STORIES260K();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* key : {"llama.attention.layer_norm_rms_epsilon", "llama.rope.freq_base"}) {
    for (float v : {0.0f, -1.0f, inf, nan}) {
      test::ModelCopy m(test::stories260k_path());
      m.writer().set_f32(key, v);
      EXPECT_TRUE(fails_with(m.write(temp("hparam.gguf")), std::string(key) + " = ")) << v;
    }
  }
  for (float v : {-1.0f, inf, nan}) {
    test::ModelCopy scale(test::stories260k_path());
    scale.writer().set_string("llama.rope.scaling.type", "linear");
    scale.writer().set_f32("llama.rope.scaling.factor", v);
    EXPECT_TRUE(fails_with(scale.write(temp("scale.gguf")), "llama.rope.scaling.factor = ")) << v;
  }
}

// RoPE scaling keys as llama.cpp reads them: rope.scaling.factor, else the older
// rope.scale_linear; a factor of 0 is no scaling; the type defaults to linear; "none" ignores
// the factor; YaRN is refused by name.
TEST(ModelLoad, RopeScalingKeysAsLlamaCpp) {
  QMM_REQUIRE_STORIES260K();
  Context ctx(1);
  auto freq = [&](const std::function<void(gguf::Writer&)>& edit) {
    test::ModelCopy m(test::stories260k_path());
    edit(m.writer());
    const Model model = Model::load(m.write(temp("rope_scale.gguf")), {}, ctx.pool());
    return model.rope_freqs(false, 8)[1];
  };
  const float plain = freq([](gguf::Writer&) {});
  EXPECT_EQ(freq([](gguf::Writer& w) { w.set_f32("llama.rope.scaling.factor", 0.0f); }), plain);
  EXPECT_EQ(freq([](gguf::Writer& w) {
              w.set_string("llama.rope.scaling.type", "linear");
              w.set_f32("llama.rope.scaling.factor", 0.0f);
            }),
            plain);
  EXPECT_FLOAT_EQ(freq([](gguf::Writer& w) { w.set_f32("llama.rope.scale_linear", 4.0f); }), plain / 4);
  EXPECT_FLOAT_EQ(freq([](gguf::Writer& w) { w.set_f32("llama.rope.scaling.factor", 2.0f); }), plain / 2);
  EXPECT_EQ(freq([](gguf::Writer& w) {
              w.set_string("llama.rope.scaling.type", "none");
              w.set_f32("llama.rope.scaling.factor", 4.0f);
            }),
            plain);
  test::ModelCopy yarn(test::stories260k_path());
  yarn.writer().set_string("llama.rope.scaling.type", "yarn");
  EXPECT_TRUE(fails_with(yarn.write(temp("yarn.gguf")), "rope.scaling.type 'yarn' is not supported (none, linear, longrope)"));
}

// A tensor the family does not read would be dropped: a different model. llama.cpp refuses such
// a file too ("wrong number of tensors"); qmm names the tensors.
TEST(ModelLoad, TensorsTheArchitectureDoesNotReadAreRefusedByName) {
  QMM_REQUIRE_STORIES260K();
  test::ModelCopy one(test::stories260k_path());
  one.add_f32("output.bias", {512}, 0.0f);
  EXPECT_TRUE(fails_with(one.write(temp("output_bias.gguf")),
                         "tensor 'output.bias' not read by the llama architecture (qmm would run a different model without it)"));
  test::ModelCopy many(test::stories260k_path());
  for (int l = 0; l < 5; ++l) many.add_f32("blk." + std::to_string(l) + ".attn_norm.bias", {64}, 0.0f);
  many.add_f32("blk.0.post_attention_norm.weight", {64}, 1.0f);
  EXPECT_TRUE(fails_with(many.write(temp("biases.gguf")),
                         "tensors 'blk.0.attn_norm.bias', 'blk.1.attn_norm.bias', 'blk.2.attn_norm.bias', "
                         "'blk.3.attn_norm.bias' and 2 more not read by the llama architecture"));
  // Gemma's graph has no attention output bias (llama.cpp does not load one).
  const std::string gemma = temp("gemma_src.gguf");
  gguf::synth_model(*gguf::find_synth_shape("tiny-gemma3"), WeightType::f32, 1, gemma, 1);
  test::ModelCopy g(gemma);
  g.add_f32("blk.0.attn_output.bias", {g.source().tensor("blk.0.attn_output.weight").shape[1]}, 0.0f);
  EXPECT_TRUE(fails_with(g.write(temp("gemma_wo_bias.gguf")), "tensor 'blk.0.attn_output.bias' not read by the gemma3 architecture"));
  // rope_freqs: Llama 3's (llama.cpp reads it for llama only, qmm too), not Qwen's.
  const std::string qwen = temp("qwen_src.gguf");
  gguf::synth_model(*gguf::find_synth_shape("tiny-qwen2"), WeightType::f32, 1, qwen, 1);
  test::ModelCopy q(qwen);
  q.add_f32("rope_freqs.weight", {8}, 1.0f);
  EXPECT_TRUE(fails_with(q.write(temp("qwen_rope_freqs.gguf")), "tensor 'rope_freqs.weight' not read by the qwen2 architecture"));
}

// Q/K/V biases are read wherever the file has them (llama.cpp's create_tensor_qkv takes them for
// every family): a bias on a Llama model changes its logits; a missing part of one is zero.
TEST(ModelLoad, QkvBiasesAreReadForEveryFamily) {
  QMM_REQUIRE_STORIES260K();
  Context ctx(1);
  auto logits = [&](const std::string& path) {
    const Model model = Model::load(path, {}, ctx.pool());
    State s(model, 8, 8, ctx);
    const int32_t tokens[3] = {1, 100, 200};
    const float* l = forward(model, s, tokens, 3);
    return std::vector<float>(l, l + model.config().n_vocab);
  };
  test::ModelCopy plain(test::stories260k_path());
  const std::vector<float> base = logits(plain.write(temp("plain.gguf")));
  test::ModelCopy zero(test::stories260k_path());
  zero.add_f32("blk.1.attn_q.bias", {64}, 0.0f);
  EXPECT_EQ(logits(zero.write(temp("zero_bias.gguf"))), base);
  test::ModelCopy biased(test::stories260k_path());
  biased.add_f32("blk.1.attn_v.bias", {64 * 4 / 8}, 0.5f);  // kv_dim: 4 KV heads of 8
  EXPECT_NE(logits(biased.write(temp("v_bias.gguf"))), base);
}

// Phi-3 with separate attn_q / attn_k / attn_v (instead of the fused attn_qkv) is the same model.
TEST(ModelLoad, Phi3WithSeparateQkvIsTheSameModel) {
  const std::string src = temp("phi3_fused.gguf");
  gguf::synth_model(*gguf::find_synth_shape("tiny-phi3"), WeightType::f32, 1, src, 1);
  test::ModelCopy split(src, [](const std::string& n) { return n.ends_with(".attn_qkv.weight") ? "" : n; });
  const size_t embd = 96, q = 96, kv = 96;
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    const auto* data = split.source().tensor(b + "attn_qkv.weight").data;
    split.writer().add_tensor(b + "attn_q.weight", gguf::kF32, {embd, q}, data, embd * q * 4);
    split.writer().add_tensor(b + "attn_k.weight", gguf::kF32, {embd, kv}, data + embd * q * 4, embd * kv * 4);
    split.writer().add_tensor(b + "attn_v.weight", gguf::kF32, {embd, kv}, data + embd * (q + kv) * 4, embd * kv * 4);
  }
  Context ctx(1);
  auto logits = [&](const std::string& path) {
    const Model model = Model::load(path, {}, ctx.pool());
    State s(model, 16, 16, ctx);
    const int32_t tokens[4] = {1, 100, 200, 300};
    const float* l = forward(model, s, tokens, 4);
    return std::vector<float>(l, l + model.config().n_vocab);
  };
  EXPECT_EQ(logits(split.write(temp("phi3_split.gguf"))), logits(src));
}

// Gemma's sliding-window keys as llama.cpp reads them: attention.sliding_window_pattern (which
// layers are local) and rope.freq_base_swa (their RoPE base) override the family's defaults.
TEST(ModelLoad, GemmaSlidingWindowPatternAndBaseFromTheFile) {
  const std::string src = temp("gemma3_src.gguf");
  gguf::synth_model(*gguf::find_synth_shape("tiny-gemma3"), WeightType::f32, 1, src, 1);
  Context ctx(1);
  {
    const Model plain = Model::load(src, {}, ctx.pool());
    for (size_t l = 0; l < 6; ++l) EXPECT_EQ(plain.config().is_local(l), l != 5) << l;
    EXPECT_FLOAT_EQ(plain.rope_freqs(true, 64)[1], static_cast<float>(std::pow(10000.0, -2.0 / 32)));
  }
  test::ModelCopy m(src);
  m.writer().set_u32("gemma3.attention.sliding_window_pattern", 2);
  m.writer().set_f32("gemma3.rope.freq_base_swa", 5000.0f);
  const Model model = Model::load(m.write(temp("gemma3_pattern.gguf")), {}, ctx.pool());
  for (size_t l = 0; l < 6; ++l) EXPECT_EQ(model.config().is_local(l), l % 2 == 0) << l;
  EXPECT_FLOAT_EQ(model.rope_freqs(true, 64)[1], static_cast<float>(std::pow(5000.0, -2.0 / 32)));
}

// Phi-3 LongRoPE (tiny-phi3-long: original context 256): the short factors divide the RoPE
// frequencies up to a context of 256, the long ones beyond (as llama.cpp, after rounding the
// context up to a multiple of 256), and the attention factor scales queries and keys at every
// length; without the factors or the attention factor the model computes something else.
TEST(ModelLoad, Phi3LongRopeFactorsAndAttentionFactor) {
  const std::string src = temp("phi3_long.gguf");
  gguf::synth_model(*gguf::find_synth_shape("tiny-phi3-long"), WeightType::f32, 1, src, 1);
  Context ctx(1);
  const Model model = Model::load(src, {}, ctx.pool());
  const Config& c = model.config();
  EXPECT_EQ(c.n_ctx_orig, 256u);
  EXPECT_FLOAT_EQ(c.rope_attn_factor, std::sqrt(1.0f + std::log(8.0f) / std::log(256.0f)));
  const gguf::File& f = model.file();
  std::vector<float> short_f(16), long_f(16);
  gguf::dequantize_rows(gguf::kF32, f.tensor("rope_factors_short.weight").data, short_f.data(), 1, 16);
  gguf::dequantize_rows(gguf::kF32, f.tensor("rope_factors_long.weight").data, long_f.data(), 1, 16);
  for (size_t i = 0; i < 16; ++i) {
    const double theta = std::pow(10000.0, -2.0 * static_cast<double>(i) / 32);
    EXPECT_FLOAT_EQ(model.rope_freqs(false, 256)[i], static_cast<float>(theta / short_f[i])) << i;
    EXPECT_FLOAT_EQ(model.rope_freqs(false, 200)[i], static_cast<float>(theta / short_f[i])) << i;
    EXPECT_FLOAT_EQ(model.rope_freqs(false, 257)[i], static_cast<float>(theta / long_f[i])) << i;
  }
  EXPECT_NE(short_f, long_f);
  auto logits = [&](const std::string& path, size_t n_ctx) {
    const Model m = Model::load(path, {}, ctx.pool());
    State s(m, n_ctx, 8, ctx);
    const int32_t tokens[4] = {1, 100, 200, 300};
    const float* l = forward(m, s, tokens, 4);
    return std::vector<float>(l, l + m.config().n_vocab);
  };
  const std::vector<float> at_256 = logits(src, 256), at_512 = logits(src, 512);
  EXPECT_NE(at_256, at_512);
  test::ModelCopy no_attn(src);
  no_attn.writer().set_f32("phi3.rope.scaling.attn_factor", 1.0f);
  EXPECT_NE(logits(no_attn.write(temp("phi3_attn1.gguf")), 256), at_256);
  test::ModelCopy no_factors(src, [](const std::string& n) { return n.starts_with("rope_factors") ? "" : n; });
  EXPECT_NE(logits(no_factors.write(temp("phi3_nofactors.gguf")), 256), at_256);
}

// A factor divides a pair's angle: zero, infinite or NaN would make it meaningless; a negative
// one turns the pair the other way, as in llama.cpp (whose own test models have such factors).
TEST(ModelLoad, RopeFactorsMustBeFiniteNonZero) {
  QMM_REQUIRE_STORIES260K();
  for (float v : {0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    test::ModelCopy m(test::stories260k_path());
    m.add_f32("rope_freqs.weight", {4}, v);  // n_rot 8: 4 pairs
    EXPECT_TRUE(fails_with(m.write(temp("rope_freqs.gguf")), "rope_freqs.weight[0] = ")) << v;
  }
  for (float v : {1.0f, -2.0f}) {
    test::ModelCopy ok(test::stories260k_path());
    ok.add_f32("rope_freqs.weight", {4}, v);
    EXPECT_EQ(load_error(ok.write(temp("rope_ok.gguf"))), "") << v;
  }
}

// llama.cpp's optional per-tensor scales and biases, in its order: a projection's output is
// multiplied by its ".scale" and then gets its ".bias" (Q/K/V, attention output), except in the
// FFN, where the bias comes first: with the weights doubled instead of a scale of 2, the same
// logits come out exactly (attn_output: bias c; ffn_down: bias 2c). Families whose graph leaves
// a tensor unused (input scales everywhere, FFN scales in Qwen 2) load it and change nothing.
TEST(ModelLoad, ScalesAndBiasesAreAppliedInLlamaCppsOrder) {
  QMM_REQUIRE_STORIES260K();
  Context ctx(1);
  auto logits = [&](const std::string& path) {
    const Model model = Model::load(path, {}, ctx.pool());
    State s(model, 8, 8, ctx);
    const int32_t tokens[3] = {1, 100, 200};
    const float* l = forward(model, s, tokens, 3);
    return std::vector<float>(l, l + model.config().n_vocab);
  };
  const std::string wo = "blk.1.attn_output.weight", down = "blk.2.ffn_down.weight";
  test::ModelCopy scaled(test::stories260k_path());
  const gguf::TensorInfo& two = scaled.source().tensor(wo);
  const gguf::TensorInfo& dn = scaled.source().tensor(down);
  ASSERT_EQ(two.type, gguf::kF32);
  ASSERT_EQ(dn.type, gguf::kF32);
  scaled.add_f32("blk.1.attn_output.scale", {1}, 2.0f);
  scaled.add_f32("blk.1.attn_output.bias", {two.shape[1]}, 0.25f);
  scaled.add_f32("blk.2.ffn_down.scale", {1}, 2.0f);
  scaled.add_f32("blk.2.ffn_down.bias", {dn.shape[1]}, 0.25f);
  scaled.add_f32("blk.2.ffn_down.input_scale", {1}, 5.0f);  // unused, as in llama.cpp
  const std::vector<float> a = logits(scaled.write(temp("scaled.gguf")));
  test::ModelCopy doubled(test::stories260k_path(), [&](const std::string& n) { return n == wo || n == down ? "" : n; });
  std::vector<float> w[2];  // (the writer reads them when it writes)
  for (size_t i = 0; i < 2; ++i) {
    const gguf::TensorInfo& t = i == 0 ? two : dn;
    w[i].resize(t.bytes / 4);
    std::memcpy(w[i].data(), t.data, t.bytes);
    for (float& x : w[i]) x *= 2;
    doubled.writer().add_tensor(t.name, gguf::kF32, t.shape, w[i].data(), t.bytes);
  }
  doubled.add_f32("blk.1.attn_output.bias", {two.shape[1]}, 0.25f);
  doubled.add_f32("blk.2.ffn_down.bias", {dn.shape[1]}, 0.5f);
  EXPECT_EQ(a, logits(doubled.write(temp("doubled.gguf"))));
  test::ModelCopy plain(test::stories260k_path());
  EXPECT_NE(a, logits(plain.write(temp("plain.gguf"))));

  const std::string qwen = temp("qwen_scales_src.gguf");
  gguf::synth_model(*gguf::find_synth_shape("tiny-qwen2"), WeightType::f32, 1, qwen, 1);
  test::ModelCopy q(qwen);
  q.add_f32("blk.0.ffn_down.scale", {1}, 3.0f);
  q.add_f32("blk.0.attn_q.input_scale", {1}, 3.0f);
  test::ModelCopy q_plain(qwen);
  EXPECT_EQ(logits(q.write(temp("qwen_scales.gguf"))), logits(q_plain.write(temp("qwen_plain.gguf"))));
}

// llama.cpp's newer files give the sliding-window pattern as one flag per layer (1: local).
TEST(ModelLoad, SlidingWindowPatternPerLayer) {
  const std::string src = temp("gemma3_swa_src.gguf");
  gguf::synth_model(*gguf::find_synth_shape("tiny-gemma3"), WeightType::f32, 1, src, 1);
  const size_t n_layer = gguf::File::open(src).get_u64("gemma3.block_count");
  test::ModelCopy m(src);
  std::vector<int32_t> flags(n_layer, 0);
  flags[0] = flags[2] = 1;
  m.writer().set_i32_array("gemma3.attention.sliding_window_pattern", flags);
  Context ctx(1);
  const Model model = Model::load(m.write(temp("gemma3_swa.gguf")), {}, ctx.pool());
  for (size_t l = 0; l < n_layer; ++l) EXPECT_EQ(model.config().is_local(l), flags[l] == 1) << l;
  test::ModelCopy bad(src);
  bad.writer().set_i32_array("gemma3.attention.sliding_window_pattern", {1, 0});
  EXPECT_TRUE(fails_with(bad.write(temp("gemma3_swa_bad.gguf")), "sliding_window_pattern must have one entry per layer"));
}

TEST(ModelLoad, SpecialTokenIdsOutsideTheVocabularyAreErrors) {
  QMM_REQUIRE_STORIES260K();
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"}) {
    test::ModelCopy m(test::stories260k_path());
    m.writer().set_u32(key, 512);
    EXPECT_TRUE(fails_with(m.write(temp("ids.gguf")), std::string(key) + " = 512 is not a token id"));
  }
}

TEST(ModelLoad, TruncatingTheFileWhileTheModelRunsIsHarmless) {
  QMM_REQUIRE_STORIES260K();
  test::ModelCopy m(test::stories260k_path());
  const std::string path = m.write(temp("truncated.gguf"));
  Context ctx(1);
  const Model model = Model::load(path, {}, ctx.pool());
  std::vector<float> before(model.config().n_embd), after(model.config().n_embd);
  model.embed(100, before.data());
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);  // the mapping now faults on every page
  model.embed(100, after.data());
  EXPECT_EQ(before, after);
  State s(model, 8, 8, ctx);
  const int32_t tokens[2] = {1, 100};
  const float* logits = forward(model, s, tokens, 2);
  EXPECT_TRUE(std::isfinite(logits[0]));
}

// Logits that are not numbers have no meaningful sample: an error, not token 0 (<unk>).
TEST(NonFiniteLogits, SamplingRefusesThem) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    for (float temp : {0.0f, 0.8f}) {
      SamplerParams p;
      p.temperature = temp;
      Sampler s(p, 4);
      const float logits[4] = {0.5f, bad, 1.0f, 2.0f};
      try {
        s.sample(logits, {});
        ADD_FAILURE() << "sampled from logits with " << bad;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("logits are not finite (token 1"), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace qmm::llm
