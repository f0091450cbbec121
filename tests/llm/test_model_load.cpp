// Loading trusts nothing in the file: the layers block_count claims must all be there with
// the shapes the hyper-parameters give (checked before anything sized by the metadata is
// allocated), no layer beyond them, metadata that makes the math meaningless is an error,
// token ids name real tokens, and the model keeps running when its file is truncated.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "llm/model.h"
#include "llm/sampler.h"
#include "llm/synth.h"
#include "text/tokenizer.h"
#include "model_copy.h"
#include "test_models.h"

namespace qmm::llm {
namespace {

std::string temp(const std::string& name) { return ::testing::TempDir() + "qmm_load_" + name; }

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
  EXPECT_NE(msg.find("architecture 'falcon' is not supported (supported: llama, mistral, qwen2, qwen3, phi3, gemma2, gemma3)"),
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
  // A Gemma 3 file without a layer's post-FFN norm, a Phi-3 file without its fused QKV.
  for (const auto& [shape, tensor] : {std::pair{"tiny-gemma3", "blk.5.post_ffw_norm.weight"}, {"tiny-phi3", "blk.1.attn_qkv.weight"},
                                      {"tiny-qwen2", "blk.0.attn_k.bias"}, {"tiny-qwen3", "blk.1.attn_q_norm.weight"}}) {
    const std::string src = temp(std::string(shape) + ".gguf");
    gguf::synth_model(*gguf::find_synth_shape(shape), WeightType::q8_0, 1, src, 1, {.replace = true, .inputs = {}});
    EXPECT_EQ(load_error(src), "") << shape;
    test::ModelCopy m(src, [&](const std::string& name) { return name == tensor ? "" : name; });
    EXPECT_TRUE(fails_with(m.write(temp("missing.gguf")), "tensor '" + std::string(tensor) + "' missing")) << shape;
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
  test::ModelCopy scale(test::stories260k_path());
  scale.writer().set_string("llama.rope.scaling.type", "linear");
  scale.writer().set_f32("llama.rope.scaling.factor", 0.0f);
  EXPECT_TRUE(fails_with(scale.write(temp("scale.gguf")), "llama.rope.scaling.factor = "));
}

TEST(ModelLoad, RopeFactorsMustBeFinitePositive) {
  QMM_REQUIRE_STORIES260K();
  for (float v : {0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), -2.0f}) {
    test::ModelCopy m(test::stories260k_path());
    m.add_f32("rope_freqs.weight", {4}, v);  // n_rot 8: 4 pairs
    EXPECT_TRUE(fails_with(m.write(temp("rope_freqs.gguf")), "rope_freqs.weight[0] = ")) << v;
  }
  test::ModelCopy ok(test::stories260k_path());
  ok.add_f32("rope_freqs.weight", {4}, 1.0f);
  EXPECT_EQ(load_error(ok.write(temp("rope_ok.gguf"))), "");
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
