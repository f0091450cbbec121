#include "gguf_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/fp16.h"

namespace qmm::test {

std::vector<uint8_t> small_gguf(size_t* header_end) {
  Bytes h;
  h.b = {'G', 'G', 'U', 'F'};
  h.put<uint32_t>(3).put<uint64_t>(3).put<uint64_t>(18);
  h.str("general.architecture").put<uint32_t>(8).str("llama");
  h.str("t.u8").put<uint32_t>(0).put<uint8_t>(200);
  h.str("t.i8").put<uint32_t>(1).put<int8_t>(-5);
  h.str("t.u16").put<uint32_t>(2).put<uint16_t>(60000);
  h.str("t.i16").put<uint32_t>(3).put<int16_t>(-300);
  h.str("t.u32").put<uint32_t>(4).put<uint32_t>(4000000000u);
  h.str("t.i32").put<uint32_t>(5).put<int32_t>(-7);
  h.str("t.f32").put<uint32_t>(6).put<float>(1.5f);
  h.str("t.bool").put<uint32_t>(7).put<uint8_t>(1);
  h.str("t.u64").put<uint32_t>(10).put<uint64_t>(1ull << 40);
  h.str("t.i64").put<uint32_t>(11).put<int64_t>(-(1ll << 40));
  h.str("t.f64").put<uint32_t>(12).put<double>(0.25);
  h.str("t.arr_u32").put<uint32_t>(9).put<uint32_t>(4).put<uint64_t>(3).put<uint32_t>(1).put<uint32_t>(2).put<uint32_t>(3);
  h.str("t.arr_f32").put<uint32_t>(9).put<uint32_t>(6).put<uint64_t>(2).put<float>(0.5f).put<float>(-2.0f);
  h.str("t.arr_str").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(3).str("a").str("").str("hello");
  h.str("t.arr_empty").put<uint32_t>(9).put<uint32_t>(5).put<uint64_t>(0);
  h.str("t.arr_i32").put<uint32_t>(9).put<uint32_t>(5).put<uint64_t>(2).put<int32_t>(-1).put<int32_t>(7);
  h.str("general.alignment").put<uint32_t>(4).put<uint32_t>(32);
  // Tensors: offsets relative to the data section, aligned to 32.
  h.str("t.a").put<uint32_t>(1).put<uint64_t>(8).put<uint32_t>(0).put<uint64_t>(0);               // 32 B
  h.str("t.b").put<uint32_t>(2).put<uint64_t>(64).put<uint64_t>(2).put<uint32_t>(8).put<uint64_t>(32);  // 136 B
  h.str("t.c").put<uint32_t>(2).put<uint64_t>(4).put<uint64_t>(3).put<uint32_t>(1).put<uint64_t>(192);   // 24 B
  h.pad(32);
  if (header_end) *header_end = h.size();
  for (int i = 0; i < 8; ++i) h.put<float>(static_cast<float>(i) * 0.5f);  // norm
  h.pad(32);
  for (int r = 0; r < 4; ++r) {  // w8: 2 rows of 2 Q8_0 blocks
    h.put<uint16_t>(fp32_to_fp16(0.125f));
    for (int j = 0; j < 32; ++j) h.put<int8_t>(static_cast<int8_t>(j - 16 + r));
  }
  h.pad(32);
  for (int i = 0; i < 12; ++i) h.put<uint16_t>(fp32_to_fp16(static_cast<float>(i)));  // h
  h.pad(32);
  return h.b;
}

std::string stories_path() { return std::string(QMM_TEST_MODELS_DIR) + "/stories260K.gguf"; }

std::string temp_path(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "qmm_gguf_tests";
  dir /= std::string(info ? info->test_suite_name() : "x") + "." + (info ? info->name() : "y");
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace qmm::test
