// GGUF writer: round trips through the reader.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/error.h"
#include "gguf_test_util.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"

namespace qmm {
namespace {

using namespace gguf;

TEST(GgufWriter, RoundTrip) {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 2);
  w.set_f32("llama.rope.freq_base", 10000.0f);
  w.set_bool("b", true);
  w.set_u8("u8", 7);
  w.set_i32("i32", -4);
  w.set_u64("u64", 1ull << 50);
  w.set_string_array("tokens", std::vector<std::string>{"<unk>", "", "abc"});
  w.set_f32_array("scores", {0.5f, -1.0f, 2.0f});
  w.set_i32_array("types", {2, 1, 1});
  w.set_u32("llama.block_count", 3);  // replaces, keeps the position
  std::vector<float> a(5 * 3);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  w.add_tensor("a", kF32, {5, 3}, a.data(), a.size() * 4);
  w.add_tensor("b", kF16, {40}, [](uint8_t* dst, size_t first, size_t rows) {
    ASSERT_EQ(first, 0u);
    ASSERT_EQ(rows, 1u);
    for (int i = 0; i < 80; ++i) dst[i] = static_cast<uint8_t>(i % 2 ? 0x3c : 0);  // 1.0
  });
  const std::string path = test::temp_path("rt.gguf");
  w.write(path);

  const File f = File::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.keys().size(), 10u);
  EXPECT_EQ(f.keys()[1], "llama.block_count");
  EXPECT_EQ(f.get_u64("llama.block_count"), 3u);
  EXPECT_EQ(f.type_of("llama.block_count"), ValueType::u32);
  EXPECT_EQ(f.get_f64("llama.rope.freq_base"), 10000.0);
  EXPECT_TRUE(f.get_bool("b"));
  EXPECT_EQ(f.get_u64("u8"), 7u);
  EXPECT_EQ(f.get_i64("i32"), -4);
  EXPECT_EQ(f.get_u64("u64"), 1ull << 50);
  EXPECT_EQ(f.get_string_array("tokens"), (std::vector<std::string_view>{"<unk>", "", "abc"}));
  EXPECT_EQ(f.get_f32_array("scores"), (std::vector<float>{0.5f, -1.0f, 2.0f}));
  EXPECT_EQ(f.get_i32_array("types"), (std::vector<int32_t>{2, 1, 1}));
  ASSERT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.tensor("a").shape, (std::vector<uint64_t>{5, 3}));
  EXPECT_EQ(std::memcmp(f.tensor("a").data, a.data(), 60), 0);
  EXPECT_EQ(f.tensor("b").offset, 64u);  // 60 bytes padded to 32
  std::vector<float> y(40);
  dequantize_rows(kF16, f.tensor("b").data, y.data(), 1, 40);
  EXPECT_EQ(y, std::vector<float>(40, 1.0f));
  EXPECT_EQ(f.data_offset() % 32, 0u);
  EXPECT_EQ(f.file_size() % 32, 0u);

  // copy_kv keeps values bit for bit, arrays included.
  Writer w2;
  for (std::string_view k : f.keys()) w2.copy_kv(f, k);
  w2.set_u32("general.alignment", 64);
  w2.add_tensor("a", kF32, {5, 3}, a.data(), a.size() * 4);
  w2.add_tensor("c", kF32, {1}, a.data(), 4);
  const std::string path2 = test::temp_path("rt2.gguf");
  w2.write(path2);
  const File g = File::open(path2);
  EXPECT_EQ(g.alignment(), 64u);
  for (std::string_view k : f.keys()) {
    const auto x = f.raw_value(k), z = g.raw_value(k);
    EXPECT_TRUE(std::equal(x.begin(), x.end(), z.begin(), z.end())) << k;
  }
  EXPECT_EQ(g.tensor("c").offset, 64u);
  EXPECT_EQ(g.data_offset() % 64, 0u);
}

TEST(GgufWriter, ChunkedFill) {
  // A tensor larger than the 64 MiB chunk is filled in several calls of whole rows.
  Writer w;
  const size_t k = 4096, n = 4200;  // 4096 * 4 * 4200 = 68.8 MB
  size_t calls = 0, rows_seen = 0;
  w.add_tensor("big", kF32, {k, n}, [&](uint8_t* dst, size_t first, size_t rows) {
    EXPECT_EQ(first, rows_seen);
    for (size_t r = 0; r < rows; ++r) {
      const float v = static_cast<float>(first + r);
      for (size_t i = 0; i < k; ++i) std::memcpy(dst + (r * k + i) * 4, &v, 4);
    }
    rows_seen += rows;
    ++calls;
  });
  const std::string path = test::temp_path("big.gguf");
  w.write(path);
  EXPECT_EQ(rows_seen, n);
  EXPECT_GE(calls, 2u);
  const File f = File::open(path);
  const float* d = reinterpret_cast<const float*>(f.tensor("big").data);
  EXPECT_EQ(d[4199 * k + 17], 4199.0f);
  std::remove(path.c_str());
}

TEST(GgufWriter, DevNullIsWrittenNotReplaced) {
  struct stat before {}, after {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  Writer w;
  w.set_u32("x", 1);
  w.write("/dev/null");
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(before.st_rdev, after.st_rdev);
}

TEST(GgufWriter, RejectsBadTensors) {
  Writer w;
  float x[64] = {};
  EXPECT_THROW(w.add_tensor("", kF32, {4}, x, 16), Error);
  EXPECT_THROW(w.add_tensor(std::string(64, 'n'), kF32, {4}, x, 16), Error);
  EXPECT_THROW(w.add_tensor("a", kF32, {}, x, 0), Error);
  EXPECT_THROW(w.add_tensor("a", kF32, {1, 1, 1, 1, 1}, x, 4), Error);
  EXPECT_THROW(w.add_tensor("a", kF32, {4, 0}, x, 0), Error);
  EXPECT_THROW(w.add_tensor("a", kQ8_0, {48}, x, 51), Error);
  EXPECT_THROW(w.add_tensor("a", 4, {32}, x, 18), Error);
  EXPECT_THROW(w.add_tensor("a", kF32, {4}, x, 12), Error);
  w.add_tensor("a", kF32, {4}, x, 16);
  EXPECT_THROW(w.add_tensor("a", kF32, {4}, x, 16), Error);
  EXPECT_THROW(w.write("/nonexistent/dir/x.gguf"), Error);
  w.set_u32("general.alignment", 24);
  EXPECT_THROW(w.write(test::temp_path("x.gguf")), Error);
}

}  // namespace
}  // namespace qmm
