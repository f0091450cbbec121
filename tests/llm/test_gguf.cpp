// GGUF reader: the real model, every value type, and malformed files (each must throw
// qmm::Error, never crash).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include "core/error.h"
#include "core/fp16.h"
#include "gguf_test_util.h"
#include "gguf/gguf.h"

namespace qmm {
namespace {

using gguf::File;
using gguf::ValueType;
using test::small_gguf;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Parses `b` and exercises everything a model loader reads; throws qmm::Error if malformed.
void parse_and_read(const std::vector<uint8_t>& b) {
  File f = File::from_memory(b.data(), b.size(), "mutant");
  for (std::string_view k : f.keys()) {
    (void)f.value_to_string(k);
    if (f.type_of(k) == ValueType::array && f.array_type(k) == ValueType::string) (void)f.get_string_array(k);
  }
  for (const auto& t : f.tensors()) {
    ASSERT_GE(t.data, b.data());
    ASSERT_LE(t.data + t.bytes, b.data() + b.size());
    if (gguf::ggml_can_dequantize(t.type) && t.rows() > 0) {
      std::vector<float> row(t.shape[0]);
      gguf::dequantize_rows(t.type, t.data, row.data(), 1, t.shape[0]);
    }
  }
}

// Offset just past the length-prefixed string `s` in `b` (the first such occurrence).
size_t after(const std::vector<uint8_t>& b, std::string_view s) {
  test::Bytes pat;
  pat.str(s);
  auto it = std::search(b.begin(), b.end(), pat.b.begin(), pat.b.end());
  if (it == b.end()) ADD_FAILURE() << "pattern '" << s << "' not in the test file";
  return static_cast<size_t>(it - b.begin()) + pat.size();
}

template <class T>
void poke(std::vector<uint8_t>& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

// ---- the real model ----

TEST(Gguf, Stories260K) {
  const std::string path = test::stories_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "model absent: " << path;
  const File f = File::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_u64("llama.embedding_length"), 64u);
  EXPECT_EQ(f.get_u64("llama.block_count"), 5u);
  EXPECT_EQ(f.get_u64("llama.attention.head_count"), 8u);
  EXPECT_EQ(f.get_u64("llama.attention.head_count_kv"), 4u);
  EXPECT_EQ(f.get_u64("llama.feed_forward_length"), 172u);
  EXPECT_EQ(f.get_u64("llama.context_length"), 2048u);
  EXPECT_NEAR(f.get_f64("llama.attention.layer_norm_rms_epsilon"), 1e-5, 1e-9);
  EXPECT_EQ(f.get_i64("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_FALSE(f.find_u64("llama.vocab_size").has_value());
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "llama");

  const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 512u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(tokens[3], "<0x00>");
  EXPECT_EQ(f.get_f32_array("tokenizer.ggml.scores").size(), 512u);
  const auto types = f.get_i32_array("tokenizer.ggml.token_type");
  ASSERT_EQ(types.size(), 512u);
  EXPECT_EQ(types[0], 2);  // unknown
  EXPECT_EQ(types[1], 3);  // control
  EXPECT_EQ(types[3], 6);  // byte

  EXPECT_EQ(f.tensors().size(), 3u + 5u * 9u);
  const auto& emb = f.tensor("token_embd.weight");
  EXPECT_EQ(emb.type, gguf::kF32);
  EXPECT_EQ(emb.shape, (std::vector<uint64_t>{64, 512}));
  EXPECT_EQ(emb.rows(), 512u);
  EXPECT_EQ(emb.bytes, 64u * 512u * 4u);
  EXPECT_EQ(f.tensor("blk.4.ffn_down.weight").shape, (std::vector<uint64_t>{172, 64}));
  EXPECT_EQ(f.tensor("blk.0.attn_k.weight").shape, (std::vector<uint64_t>{64, 32}));
  EXPECT_EQ(f.tensor("output_norm.weight").shape, (std::vector<uint64_t>{64}));
  EXPECT_EQ(f.tensor("output_norm.weight").rows(), 1u);
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
  EXPECT_NE(error_of([&] { f.tensor("nope"); }).find("tensor 'nope' missing"), std::string::npos);
  for (const auto& t : f.tensors()) {
    EXPECT_EQ((t.data - emb.data) % 32, 0) << t.name;
    EXPECT_EQ(t.offset % 32, 0u) << t.name;
  }
  // Row 3 of the embedding, dequantized (F32: a copy).
  std::vector<float> row(64);
  gguf::dequantize_rows(emb.type, emb.data + 3 * 256, row.data(), 1, 64);
  EXPECT_EQ(std::memcmp(row.data(), emb.data + 3 * 256, 256), 0);

  // Moving keeps the mapping and the views valid.
  File g = File::open(path);
  const uint8_t* data = g.tensor("output.weight").data;
  File moved = std::move(g);
  EXPECT_EQ(moved.tensor("output.weight").data, data);
  EXPECT_EQ(moved.get_string_array("tokenizer.ggml.tokens")[1], "<s>");
}

// ---- every value type ----

TEST(Gguf, SmallFileAllValueTypes) {
  const auto b = small_gguf();
  const File f = File::from_memory(b.data(), b.size());
  EXPECT_EQ(f.keys().size(), 18u);
  EXPECT_EQ(f.keys()[0], "general.architecture");
  EXPECT_EQ(f.get_u64("t.u8"), 200u);
  EXPECT_EQ(f.get_i64("t.i8"), -5);
  EXPECT_EQ(f.get_u64("t.u16"), 60000u);
  EXPECT_EQ(f.get_i64("t.i16"), -300);
  EXPECT_EQ(f.get_u64("t.u32"), 4000000000u);
  EXPECT_EQ(f.get_i64("t.i32"), -7);
  EXPECT_EQ(f.get_f64("t.f32"), 1.5);
  EXPECT_TRUE(f.get_bool("t.bool"));
  EXPECT_EQ(f.get_u64("t.u64"), 1ull << 40);
  EXPECT_EQ(f.get_i64("t.i64"), -(1ll << 40));
  EXPECT_EQ(f.get_f64("t.f64"), 0.25);
  EXPECT_EQ(f.get_f64("t.i32"), -7.0);
  EXPECT_EQ(f.type_of("t.u16"), ValueType::u16);
  EXPECT_EQ(f.array_type("t.arr_str"), ValueType::string);
  EXPECT_EQ(f.array_size("t.arr_u32"), 3u);
  EXPECT_EQ(f.get_i32_array("t.arr_u32"), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(f.get_i32_array("t.arr_i32"), (std::vector<int32_t>{-1, 7}));
  EXPECT_EQ(f.get_f32_array("t.arr_f32"), (std::vector<float>{0.5f, -2.0f}));
  EXPECT_EQ(f.get_f32_array("t.arr_u32"), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(f.get_string_array("t.arr_str"), (std::vector<std::string_view>{"a", "", "hello"}));
  EXPECT_TRUE(f.get_i32_array("t.arr_empty").empty());
  EXPECT_EQ(f.find_string("general.architecture"), "llama");
  EXPECT_FALSE(f.find_string("general.name").has_value());
  EXPECT_EQ(f.find_f64("t.f32"), 1.5);
  EXPECT_EQ(f.raw_value("t.u32").size(), 4u);
  EXPECT_EQ(f.value_to_string("t.arr_str"), "[string x 3] 'a' '' 'hello'");

  // Type errors name the key, its type and the expected one.
  EXPECT_EQ(error_of([&] { f.get_u64("t.i8"); }), "<memory>: key 't.i8' value -5 is not an unsigned integer");
  EXPECT_EQ(error_of([&] { f.get_u64("t.f32"); }), "<memory>: key 't.f32' value 1.5 is not an unsigned integer");
  EXPECT_EQ(error_of([&] { f.get_string("t.u8"); }), "<memory>: key 't.u8' has type u8, expected string");
  EXPECT_EQ(error_of([&] { f.get_u64("t.arr_u32"); }),
            "<memory>: key 't.arr_u32' has type array of u32, expected an unsigned integer");
  EXPECT_EQ(error_of([&] { f.get_f32_array("t.arr_str"); }),
            "<memory>: key 't.arr_str' has type array of string, expected array of f32");
  EXPECT_EQ(error_of([&] { f.get_i32_array("t.arr_f32"); }),
            "<memory>: key 't.arr_f32' has type array of f32, expected array of i32");
  EXPECT_EQ(error_of([&] { f.get_bool("t.u8"); }), "<memory>: key 't.u8' has type u8, expected bool");
  EXPECT_EQ(error_of([&] { f.get_u64("absent"); }), "<memory>: key 'absent' missing");
  EXPECT_EQ(error_of([&] { f.get_i32_array("t.u64"); }), "<memory>: key 't.u64' has type u64, expected array of i32");

  ASSERT_EQ(f.tensors().size(), 3u);
  const auto& a = f.tensor("t.a");
  const auto& q = f.tensor("t.b");
  const auto& h = f.tensor("t.c");
  EXPECT_EQ(a.bytes, 32u);
  EXPECT_EQ(q.bytes, 136u);
  EXPECT_EQ(q.rows(), 2u);
  EXPECT_EQ(h.bytes, 24u);
  std::vector<float> out(128);
  gguf::dequantize_rows(a.type, a.data, out.data(), 1, 8);
  EXPECT_EQ(out[7], 3.5f);
  gguf::dequantize_rows(q.type, q.data, out.data(), 2, 64);
  EXPECT_EQ(out[0], -16 * 0.125f);
  EXPECT_EQ(out[64 + 32 + 5], (5 - 16 + 3) * 0.125f);
  gguf::dequantize_rows(h.type, h.data, out.data(), 3, 4);
  EXPECT_EQ(out[11], 11.0f);
}

TEST(Gguf, Version2IsAccepted) {  // v2 has v3's layout (64-bit counts); v1 is rejected
  auto b = small_gguf();
  poke<uint32_t>(b, 4, 2);
  const File f = File::from_memory(b.data(), b.size());
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.tensors().size(), 3u);
}

TEST(Gguf, OpenErrors) {
  EXPECT_NE(error_of([] { File::open("/nonexistent/x.gguf"); }).find("/nonexistent/x.gguf: cannot open"),
            std::string::npos);
  EXPECT_NE(error_of([] { File::open("/tmp"); }).find("not a regular file"), std::string::npos);
  const std::string empty = test::temp_path("empty.gguf");
  test::write_bytes(empty, {});
  EXPECT_NE(error_of([&] { File::open(empty); }).find("too short"), std::string::npos);
  const std::string good = test::temp_path("good.gguf");
  test::write_bytes(good, small_gguf());
  EXPECT_EQ(File::open(good).tensors().size(), 3u);
  try {
    File::open(empty);
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::io);  // the CLI exits 1, not 2 (usage)
  }
}

// ---- malformed files ----

TEST(Gguf, EveryTruncationThrows) {
  size_t header_end = 0;
  const auto b = small_gguf(&header_end);
  const size_t last_tensor_end = header_end + 192 + 24;
  for (size_t n = 0; n < b.size(); ++n) {
    const std::vector<uint8_t> t(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
    if (n < last_tensor_end) {
      EXPECT_THROW(File::from_memory(t.data(), t.size()), Error) << "truncated to " << n << " bytes";
    } else {
      EXPECT_NO_THROW(File::from_memory(t.data(), t.size())) << "truncated to " << n << " bytes (padding only)";
    }
  }
}

// The real model cut at every offset of its header, metadata and tensor-info region (and a
// sample of the data section): always a clean error.
TEST(Gguf, Stories260KTruncations) {
  const std::string path = test::stories_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "model absent: " << path;
  const auto b = test::read_bytes(path);
  const size_t data_offset = File::from_memory(b.data(), b.size()).data_offset();
  for (size_t n = 0; n < b.size(); n += n < data_offset ? 1 : 4099) {
    EXPECT_THROW(File::from_memory(b.data(), n), Error) << "truncated to " << n << " bytes";
  }
}

struct Mutation {
  const char* what;
  std::function<void(std::vector<uint8_t>&)> apply;
  const char* expect;  // substring of the error
};

TEST(Gguf, MalformedFilesThrowNamedErrors) {
  constexpr uint64_t kHuge = ~0ull;
  const std::vector<Mutation> mutations = {
      {"magic", [](auto& b) { b[0] = 'X'; }, "bad magic"},
      {"version 1", [](auto& b) { poke<uint32_t>(b, 4, 1); }, "version 1 is not supported"},
      {"version 4", [](auto& b) { poke<uint32_t>(b, 4, 4); }, "unsupported GGUF version 4"},
      {"big endian", [](auto& b) { poke<uint32_t>(b, 4, 0x03000000u); }, "big-endian"},
      {"huge tensor count", [](auto& b) { poke<uint64_t>(b, 8, kHuge); }, "tensor count"},
      {"huge kv count", [](auto& b) { poke<uint64_t>(b, 16, 1ull << 62); }, "metadata count"},
      {"kv count too small", [](auto& b) { poke<uint64_t>(b, 16, 17); }, "tensor"},
      {"key length huge", [](auto& b) { poke<uint64_t>(b, 24, kHuge); }, "past the end of the file"},
      {"key length past end", [](auto& b) { poke<uint64_t>(b, 24, b.size()); }, "past the end of the file"},
      {"empty key", [](auto& b) { poke<uint64_t>(b, 24, 0); }, "empty key"},
      {"value type 13", [](auto& b) { poke<uint32_t>(b, after(b, "t.u8"), 13); }, "unknown value type 13"},
      {"value type max", [](auto& b) { poke<uint32_t>(b, after(b, "t.u8"), 0xffffffffu); }, "unknown value type"},
      {"string value huge", [](auto& b) { poke<uint64_t>(b, after(b, "general.architecture") + 4, kHuge - 3); },
       "past the end of the file"},
      {"nested array", [](auto& b) { poke<uint32_t>(b, after(b, "t.arr_u32") + 4, 9); }, "array of arrays"},
      {"array elem type bad", [](auto& b) { poke<uint32_t>(b, after(b, "t.arr_u32") + 4, 77); }, "unknown type 77"},
      {"array count huge", [](auto& b) { poke<uint64_t>(b, after(b, "t.arr_u32") + 8, kHuge / 2); },
       "elements, past the end"},
      {"array count x size overflows", [](auto& b) { poke<uint64_t>(b, after(b, "t.arr_u32") + 8, 1ull << 62); },
       "elements, past the end"},
      {"string array count huge", [](auto& b) { poke<uint64_t>(b, after(b, "t.arr_str") + 8, 1ull << 40); },
       "elements, past the end"},
      {"string element length huge", [](auto& b) { poke<uint64_t>(b, after(b, "t.arr_str") + 16, kHuge); },
       "element 0 at offset"},
      {"duplicate key", [](auto& b) { b[after(b, "t.u8") - 2] = 'i'; }, "duplicate metadata key 't.i8'"},
      {"alignment 0", [](auto& b) { poke<uint32_t>(b, after(b, "general.alignment") + 4, 0); }, "not a power of two"},
      {"alignment 48", [](auto& b) { poke<uint32_t>(b, after(b, "general.alignment") + 4, 48); }, "not a power of two"},
      {"alignment 2^31", [](auto& b) { poke<uint32_t>(b, after(b, "general.alignment") + 4, 1u << 31); },
       "not a power of two"},
      {"alignment u64 huge", [](auto& b) {  // found by the fuzzer: the message cast 2^64 to long long
         const size_t at = after(b, "general.alignment");
         poke<uint32_t>(b, at, 10);
         poke<uint64_t>(b, at + 4, ~0ull);  // overwrites the first tensor name's length too
       }, "general.alignment 1.844674407e+19 is not a power of two"},
      {"alignment as float", [](auto& b) { poke<uint32_t>(b, after(b, "general.alignment"), 6); }, "expected u32"},
      {"alignment 64 (offsets misaligned)", [](auto& b) { poke<uint32_t>(b, after(b, "general.alignment") + 4, 64); },
       "not a multiple of the alignment 64"},
      {"tensor name huge", [](auto& b) { poke<uint64_t>(b, after(b, "t.a") - 11, kHuge); }, "past the end"},
      {"empty tensor name", [](auto& b) { poke<uint64_t>(b, after(b, "t.a") - 11, 0); }, "empty name"},
      {"0 dims", [](auto& b) { poke<uint32_t>(b, after(b, "t.a"), 0); }, "has 0 dimensions"},
      {"5 dims", [](auto& b) { poke<uint32_t>(b, after(b, "t.a"), 5); }, "has 5 dimensions"},
      {"dims huge", [](auto& b) { poke<uint32_t>(b, after(b, "t.a"), 0xffffffffu); }, "dimensions"},
      {"dim 0", [](auto& b) { poke<uint64_t>(b, after(b, "t.c") + 12, 0); }, "invalid dimension 1 = 0"},
      {"dim negative", [](auto& b) { poke<uint64_t>(b, after(b, "t.c") + 4, kHuge); }, "invalid dimension 0"},
      {"shape overflows", [](auto& b) {
         poke<uint64_t>(b, after(b, "t.c") + 4, 1ull << 40);
         poke<uint64_t>(b, after(b, "t.c") + 12, 1ull << 40);
       }, "shape overflows"},
      {"bytes overflow", [](auto& b) {
         poke<uint64_t>(b, after(b, "t.c") + 4, 1ull << 31);
         poke<uint64_t>(b, after(b, "t.c") + 12, 1ull << 31);
       }, "past the end of the file"},
      {"row bytes wrap", [](auto& b) {  // found by the fuzzer: 2^62 F32 values are 2^64 bytes, i.e. 0
         poke<uint64_t>(b, after(b, "t.a") + 4, 1ull << 62);  // t.a: F32, one dimension
       }, "byte size overflows"},
      {"type removed (4)", [](auto& b) { poke<uint32_t>(b, after(b, "t.a") + 12, 4); }, "unknown ggml type 4"},
      {"type 1000", [](auto& b) { poke<uint32_t>(b, after(b, "t.a") + 12, 1000); }, "unknown ggml type 1000"},
      {"row not a block multiple", [](auto& b) { poke<uint64_t>(b, after(b, "t.b") + 4, 48); },
       "row length 48 is not a multiple of the q8_0 block size 32"},
      {"misaligned offset", [](auto& b) { poke<uint64_t>(b, after(b, "t.a") + 16, 4); },
       "offset 4 is not a multiple of the alignment 32"},
      {"offset past end", [](auto& b) { poke<uint64_t>(b, after(b, "t.c") + 24, 1ull << 20); }, "past the end of the file"},
      {"offset huge", [](auto& b) { poke<uint64_t>(b, after(b, "t.c") + 24, kHuge - 31); }, "past the end of the file"},
      {"data runs past end", [](auto& b) { poke<uint64_t>(b, after(b, "t.c") + 12, 40); }, "past the end of the file"},
      {"overlap", [](auto& b) { poke<uint64_t>(b, after(b, "t.c") + 24, 160); }, "'t.b' and 't.c' overlap"},
      {"duplicate tensor", [](auto& b) { b[after(b, "t.c") - 1] = 'a'; }, "duplicate tensor name 't.a'"},
  };
  for (const Mutation& m : mutations) {
    auto b = small_gguf();
    m.apply(b);
    const std::string err = error_of([&] { File::from_memory(b.data(), b.size()); });
    ASSERT_FALSE(err.empty()) << m.what << ": no error";
    EXPECT_NE(err.find(m.expect), std::string::npos) << m.what << ": got '" << err << "'";
    EXPECT_EQ(err.find('\n'), std::string::npos) << m.what << ": not one line";
  }
}

// Random byte and word mutations of the header region: parse or throw qmm::Error, never crash
// (run under -fsanitize=address,undefined to make "never crash" strict; tests/fuzz goes further).
TEST(Gguf, RandomMutationsNeverCrash) {
  size_t header_end = 0;
  const auto base = small_gguf(&header_end);
  std::mt19937_64 rng(42);
  const uint64_t interesting[] = {0, 1, 2, 3, 4, 8, 9, 12, 13, 31, 32, 33, 0x7fffffffffffffffull, ~0ull,
                                  1ull << 32, 1ull << 63, 0xffffffffull, 64, 255, 256};
  int parsed = 0, rejected = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    auto b = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % header_end;
      switch (rng() % 3) {
        case 0: b[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: b[at] = static_cast<uint8_t>(rng()); break;
        default:
          if (at + 8 <= b.size()) poke<uint64_t>(b, at, interesting[rng() % std::size(interesting)]);
      }
    }
    if (rng() % 4 == 0) b.resize(rng() % b.size());
    try {
      parse_and_read(b);
      ++parsed;
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(parsed, 10);
}

}  // namespace
}  // namespace qmm
