// qmm quantize (src/llm/quantize.h): stories260K to q8_0 / q4_0 / f16 / f32, re-read with the
// reader; types follow the rules, metadata is copied, the bytes are exactly quantize_rows of
// the originals and the values are close to them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/blocks.h"
#include "gguf_test_util.h"
#include "llm/gguf.h"
#include "llm/quantize.h"

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

}  // namespace
}  // namespace qmm
