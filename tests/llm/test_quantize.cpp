// qmm quantize (src/gguf/quantize.h): stories260K to q8_0 / q4_0 / f16 / f32, re-read with the
// reader; types follow the rules, metadata is copied, the bytes are exactly quantize_rows of
// the originals and the values are close to them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/blocks.h"
#include "core/error.h"
#include "gguf_test_util.h"
#include "gguf/gguf.h"
#include "gguf/quantize.h"
#include "llm/synth.h"

namespace qmm {
namespace {

using namespace gguf;

class Quantize : public ::testing::TestWithParam<WeightType> {};

TEST_P(Quantize, Stories260K) {
  const std::string path = test::stories_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "model absent: " << path;
  const WeightType target = GetParam();
  const File in = File::open(path);
  const std::string out_path = test::temp_path(std::string("stories_") + type_name(target) + ".gguf");
  const QuantizeStats st = quantize_file(in, out_path, target, 2);
  const File out = File::open(out_path);

  // Metadata: every key copied with the same encoding, file type set.
  for (std::string_view k : in.keys()) {
    ASSERT_TRUE(out.has(k)) << k;
    const auto a = in.raw_value(k), b = out.raw_value(k);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << k;
  }
  EXPECT_EQ(out.get_u64("general.file_type"), llama_ftype(target));
  EXPECT_EQ(out.alignment(), 32u);

  ASSERT_EQ(out.tensors().size(), in.tensors().size());
  size_t converted = 0;
  for (const TensorInfo& t : in.tensors()) {
    const TensorInfo& q = out.tensor(t.name);
    EXPECT_EQ(q.shape, t.shape) << t.name;
    EXPECT_EQ(q.offset % 32, 0u) << t.name;
    uint32_t want = static_cast<uint32_t>(target);
    if (t.shape.size() == 1) want = kF32;                                     // norms
    if (t.shape[0] == 172 && is_block_type(target)) want = kF32;               // ffn_down: rows of 172 keep F32
    EXPECT_EQ(q.type, want) << t.name;
    converted += q.type != t.type;
    // Bytes: exactly quantize_rows of the F32 originals.
    const size_t k = t.shape[0], n = t.rows();
    std::vector<float> x(k * n), y(k * n);
    dequantize_rows(t.type, t.data, x.data(), n, k);
    std::vector<uint8_t> expect(ggml_row_bytes(q.type, k) * n);
    quantize_rows(static_cast<WeightType>(q.type), x.data(), expect.data(), n, k);
    ASSERT_EQ(q.bytes, expect.size()) << t.name;
    EXPECT_EQ(std::memcmp(q.data, expect.data(), expect.size()), 0) << t.name;
    // Values: close to the originals.
    dequantize_rows(q.type, q.data, y.data(), n, k);
    double err = 0, ref = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      err += (x[i] - y[i]) * (x[i] - y[i]);
      ref += x[i] * x[i];
    }
    const double rel = std::sqrt(err / std::max(ref, 1e-30));
    const double tol = target == WeightType::q4_0 ? 0.2 : target == WeightType::q8_0 ? 0.01 : 1e-3;
    EXPECT_LE(rel, tol) << t.name;
  }
  EXPECT_EQ(st.converted, converted);
  EXPECT_EQ(st.converted + st.kept, in.tensors().size());
  EXPECT_EQ(converted, target == WeightType::f32 ? 0u : target == WeightType::f16 ? 37u : 32u);  // 2 + 5 x 7 matrices, ffn_down kept
}

INSTANTIATE_TEST_SUITE_P(Types, Quantize,
                         ::testing::Values(WeightType::q8_0, WeightType::q4_0, WeightType::f16, WeightType::f32),
                         [](const auto& p) { return std::string(type_name(p.param)); });

// llama.cpp's Q4_K_M / Q5_K_M rules for a 16-layer Llama (use_more_bits picks layers 0, 1, 4, 7,
// 10, 13, 14, 15), written out by hand from llama_tensor_get_type.
TEST(QuantizeRules, KQuantMixes) {
  QuantTarget m = WeightType::q4_0;
  ASSERT_TRUE(parse_quant_target("Q4_K_M", &m));
  EXPECT_TRUE(m.k_m);
  EXPECT_EQ(m.type, WeightType::q4_k);
  m.n_layer = 16;
  EXPECT_EQ(llama_ftype(m), 15u);
  for (uint32_t l = 0; l < 16; ++l) {
    const bool more = l < 2 || l == 4 || l == 7 || l == 10 || l == 13 || l >= 14;
    const std::string p = "blk." + std::to_string(l) + ".";
    EXPECT_EQ(weight_type(p + "attn_v.weight", 2048, m, kF32), more ? kQ6_K : kQ4_K) << l;
    EXPECT_EQ(weight_type(p + "ffn_down.weight", 8192, m, kF32), more ? kQ6_K : kQ4_K) << l;
    EXPECT_EQ(weight_type(p + "attn_k.weight", 2048, m, kF32), kQ4_K) << l;
    EXPECT_EQ(weight_type(p + "ffn_up.weight", 2048, m, kF32), kQ4_K) << l;
  }
  EXPECT_EQ(weight_type("output.weight", 2048, m, kF32), kQ6_K);
  EXPECT_EQ(weight_type("token_embd.weight", 2048, m, kF32), kQ4_K);
  m.has_output = false;  // tied: the embedding is the output
  EXPECT_EQ(weight_type("token_embd.weight", 2048, m, kF32), kQ6_K);
  // Rows not a multiple of 256: llama.cpp's fallbacks Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0.
  EXPECT_EQ(weight_type("blk.2.attn_q.weight", 96, m, kF32), kQ5_0);
  EXPECT_EQ(weight_type("blk.0.attn_v.weight", 96, m, kF32), kQ8_0);   // Q6_K in the mix
  EXPECT_EQ(weight_type("token_embd.weight", 96, m, kF32), kQ8_0);     // tied output: Q6_K
  EXPECT_EQ(weight_type("blk.2.attn_q.weight", 172, m, kF32), kF32);   // nor of 32: kept
  ASSERT_TRUE(parse_quant_target("q5_k_m", &m));
  EXPECT_EQ(m.type, WeightType::q5_k);
  EXPECT_EQ(llama_ftype(m), 17u);
  m.n_layer = 16;
  EXPECT_EQ(weight_type("blk.3.attn_v.weight", 2048, m, kF32), kQ5_K);
  EXPECT_EQ(weight_type("blk.4.attn_v.weight", 2048, m, kF32), kQ6_K);
  EXPECT_EQ(weight_type("blk.3.attn_v.weight", 64, m, kF32), kQ5_1);
  EXPECT_EQ(weight_type("blk.4.attn_v.weight", 64, m, kF32), kQ8_0);
  EXPECT_EQ(weight_type("blk.4.attn_v.weight", 64, QuantTarget(WeightType::q4_k), kF32), kQ5_0);  // plain K types too
  EXPECT_EQ(weight_type("blk.4.attn_v.weight", 64, QuantTarget(WeightType::q5_k), kF32), kQ5_1);
  EXPECT_EQ(weight_type("blk.4.attn_v.weight", 64, QuantTarget(WeightType::q6_k), kF32), kQ8_0);
  EXPECT_EQ(weight_type("blk.4.attn_v.weight", 64, QuantTarget(WeightType::iq4_nl), kF32), kIQ4_NL);
  ASSERT_TRUE(parse_quant_target("IQ4_NL", &m));
  EXPECT_FALSE(m.k_m);
  EXPECT_EQ(weight_type("output.weight", 2048, m, kF32), 20u);  // a plain type: every weight
  EXPECT_FALSE(parse_quant_target("q6_k_m", &m));
}

// A fused-QKV model (Phi-3: attn_qkv, no attn_v) counts its layers from attn_qkv, as llama.cpp's
// llama-quant.cpp counts n_attention_wv, and attn_qkv gets attn_v's extra bits: for 2 layers
// use_more_bits picks layer 1 only (before, 0 layers were counted and every ffn_down got Q6_K).
// tiny-phi3's rows (96, 192) are not multiples of 256: Q4_K falls back to Q5_0, Q6_K to Q8_0.
TEST(QuantizeRules, FusedQkvMixCountsLayers) {
  const std::string in_path = test::temp_path("phi3_f32.gguf"), out_path = test::temp_path("phi3_q4_k_m.gguf");
  synth_model(*find_synth_shape("tiny-phi3"), WeightType::f32, 1, in_path, 1);
  const File in = File::open(in_path);
  QuantTarget m = WeightType::q4_0;
  ASSERT_TRUE(parse_quant_target("Q4_K_M", &m));
  EXPECT_EQ(for_file(in, m).n_layer, 2u);
  quantize_file(in, out_path, m, 1);
  const File out = File::open(out_path);
  for (const char* name : {"blk.0.attn_qkv.weight", "blk.0.ffn_down.weight", "blk.0.attn_output.weight",
                           "blk.0.ffn_up.weight", "blk.1.attn_output.weight", "blk.1.ffn_up.weight", "token_embd.weight"}) {
    EXPECT_EQ(out.tensor(name).type, kQ5_0) << name;
  }
  for (const char* name : {"blk.1.attn_qkv.weight", "blk.1.ffn_down.weight", "output.weight"}) {
    EXPECT_EQ(out.tensor(name).type, kQ8_0) << name;
  }
  std::filesystem::remove(in_path);
  std::filesystem::remove(out_path);
}

// The fallbacks' blocks (Q5_0 / Q5_1, byte-identical to llama.cpp per tests/test_kquants.cpp)
// read back through the loader's dequantizers: within half a step of each 32-block's range,
// and a block holding NaN or ±Inf dequantizes to NaN (the NaN policy).
TEST(QuantizeRules, Q5FallbacksRoundTrip) {
  const size_t k = 256;
  std::vector<float> x(k);
  for (size_t i = 0; i < k; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * static_cast<float>(1 + i % 7);
  x[200] = NAN;
  for (uint32_t type : {kQ5_0, kQ5_1}) {
    std::vector<uint8_t> q(ggml_row_bytes(type, k));
    quantize_ggml_rows(type, x.data(), q.data(), 1, k);
    std::vector<float> y(k);
    dequantize_rows(type, q.data(), y.data(), 1, k);
    for (size_t b = 0; b < k / 32; ++b) {
      float lo = x[32 * b], hi = x[32 * b];
      for (size_t j = 1; j < 32; ++j) lo = std::min(lo, x[32 * b + j]), hi = std::max(hi, x[32 * b + j]);
      for (size_t j = 0; j < 32; ++j) {
        const size_t i = 32 * b + j;
        if (b == 200 / 32) {
          EXPECT_TRUE(std::isnan(y[i])) << ggml_type_name(type) << " " << i;
        } else {  // Q5_0's step is 2·amax/31 at most, Q5_1's (max − min)/31; plus the f16 rounding
          EXPECT_LE(std::fabs(y[i] - x[i]), 0.6 * 2 * std::max(-lo, hi) / 31 + 1e-3) << ggml_type_name(type) << " " << i;
        }
      }
    }
  }
}

TEST(QuantizeRules, TensorTypes) {
  TensorInfo t;
  t.name = "blk.0.ffn_down.weight";
  t.type = kF16;
  t.shape = {172, 64};
  EXPECT_EQ(quantized_type(t, WeightType::q4_0), kF16);  // keeps its type
  EXPECT_EQ(quantized_type(t, WeightType::f16), kF16);
  EXPECT_EQ(quantized_type(t, WeightType::f32), kF32);
  t.shape = {256, 64};
  EXPECT_EQ(quantized_type(t, WeightType::q8_0), kQ8_0);
  t.type = kQ6_K;  // requantized from a k-quant
  EXPECT_EQ(quantized_type(t, WeightType::q4_0), kQ4_0);
  t.type = 11;  // q3_K: cannot be dequantized here, copied
  EXPECT_EQ(quantized_type(t, WeightType::q4_0), 11u);
  t.type = kF32;
  t.shape = {64};
  EXPECT_EQ(quantized_type(t, WeightType::q4_0), kF32);
  t.name = "token_embd.weight";
  t.shape = {64, 512};
  EXPECT_EQ(quantized_type(t, WeightType::q4_0), kQ4_0);
  t.name = "some.table";  // not a weight
  EXPECT_EQ(quantized_type(t, WeightType::q4_0), kF32);
}

// The input truncated while quantize reads it (issue 22): a one-line error, not SIGBUS (the
// tensors are read from the file, not from the mapping that shrank).
TEST(Quantize, InputTruncatedMeanwhile) {
  const std::string src = test::stories_path();
  if (!std::filesystem::exists(src)) GTEST_SKIP() << "model absent: " << src;
  const std::string path = test::temp_path("shrinking.gguf");
  std::filesystem::copy_file(src, path, std::filesystem::copy_options::overwrite_existing);
  const File in = File::open(path);
  std::filesystem::resize_file(path, in.data_offset() + 1000);
  try {
    quantize_file(in, test::temp_path("shrunk_q8_0.gguf"), WeightType::q8_0, 2);
    ADD_FAILURE() << "quantize read a truncated file to its end";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shrinking.gguf: the file was truncated while being read"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace qmm
