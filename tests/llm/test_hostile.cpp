// Hostile files and misuse, generated here: mutations of stories260K, of a `qmm synth tiny`
// model and of a Mixture-of-Experts one (truncations, huge counts, wrong types, bad shapes, bad
// metadata values, duplicates, overlapping and out-of-range offsets, non-finite weights, expert
// counts and 3-D shapes), legal but extreme files (60,000 keys, 20,000 tensors, one long row)
// and paths that are not files (FIFO, directory, link loop).
// `qmm gguf`, `qmm run` and `qmm quantize` run on each as child processes; every run must be a
// one-line error with an exit code in 1..127, or succeed, within 5 s and within 4 x the file
// size + 64 MiB of memory above the process's own baseline (its RSS on a 24-byte file, which
// includes the sanitizer runtime in the sanitizer build). Cases name the error `qmm run` must
// give where one is expected.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>

#include "gguf/gguf_writer.h"
#include "llm/synth.h"
#include "model_copy.h"
#include "qmm_child.h"
#include "test_models.h"

namespace qmm::test {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// One directory per test process, removed at exit.
struct WorkDir {
  fs::path path = fs::temp_directory_path() / ("qmm_hostile_" + std::to_string(::getpid()));
  WorkDir() { fs::create_directories(path); }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
const fs::path& work_dir() {
  static const WorkDir d;
  return d.path;
}

Bytes read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

fs::path write(const std::string& name, const Bytes& b) {
  const fs::path p = work_dir() / name;
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return p;
}

const Bytes& stories() {
  static const Bytes b = read(stories260k_path());
  return b;
}

// `qmm synth tiny` (q4_0), made once.
const fs::path& tiny() {
  static const fs::path p = [] {
    const fs::path out = work_dir() / "tiny_q4_0.gguf";
    gguf::synth_model(*gguf::find_synth_shape("tiny"), WeightType::q4_0, 1, out, 1);
    return out;
  }();
  return p;
}

// `qmm synth tiny-qwen3moe` (q8_0: its expert rows are 64 wide), made once.
const fs::path& tiny_moe() {
  static const fs::path p = [] {
    const fs::path out = work_dir() / "tiny_qwen3moe.gguf";
    gguf::synth_model(*gguf::find_synth_shape("tiny-qwen3moe"), WeightType::q8_0, 1, out, 1);
    return out;
  }();
  return p;
}

// Byte offset of the length-prefixed string `s` (a key or tensor name) in the header.
size_t find_string(const Bytes& b, std::string_view s) {
  const uint64_t n = s.size();
  Bytes pat(reinterpret_cast<const uint8_t*>(&n), reinterpret_cast<const uint8_t*>(&n) + 8);
  pat.insert(pat.end(), s.begin(), s.end());
  const auto it = std::search(b.begin(), b.end(), pat.begin(), pat.end());
  if (it == b.end()) throw std::runtime_error("no string '" + std::string(s) + "' in the file");
  return static_cast<size_t>(it - b.begin());
}

template <class T>
Bytes with(Bytes b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
  return b;
}

// Offsets of a tensor info's fields: n_dims, ne[0], type, offset.
struct InfoAt {
  size_t n_dims, ne0, type, offset;
};
InfoAt info_at(const Bytes& b, std::string_view name) {
  const size_t p = find_string(b, name) + 8 + name.size();
  uint32_t n_dims;
  std::memcpy(&n_dims, b.data() + p, 4);
  return {p, p + 4, p + 4 + 8 * n_dims, p + 8 + 8 * n_dims};
}
size_t value_at(const Bytes& b, std::string_view key) { return find_string(b, key) + 8 + key.size() + 4; }

Bytes truncated(const Bytes& b, size_t n) { return Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n)); }

Bytes renamed(Bytes b, std::string_view from, std::string_view to) {  // same length
  const size_t at = find_string(b, from) + 8;
  std::memcpy(b.data() + at, to.data(), to.size());
  return b;
}

// stories260K copied with one edit of its metadata or tensors.
using Edit = std::function<void(ModelCopy&)>;
fs::path edited(const std::string& name, const Edit& edit, const std::function<std::string(const std::string&)>& rename = {},
                const std::string& src = "") {
  ModelCopy m(src.empty() ? stories260k_path() : src, rename);
  edit(m);
  return m.write(work_dir() / name);
}
std::function<std::string(const std::string&)> drop(const std::string& tensor) {
  return [tensor](const std::string& n) { return n == tensor ? "" : n; };
}

// A legal file with `keys` metadata entries and `tensors` tiny tensors (stress for linear code).
fs::path many(const std::string& name, size_t keys, size_t tensors) {
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  for (size_t i = 0; i < keys; ++i) w.set_u32("k." + std::to_string(i), static_cast<uint32_t>(i));
  static const float zeros[8] = {};
  for (size_t i = 0; i < tensors; ++i) w.add_tensor("t." + std::to_string(i) + ".weight", gguf::kF32, {8}, zeros, 32);
  w.write(work_dir() / name);
  return work_dir() / name;
}

struct Case {
  std::string name;
  std::function<fs::path()> make;
  const char* run_error = nullptr;  // a substring `qmm run`'s error must contain; "" = run must succeed
};

constexpr std::string_view blk = "blk.0.attn_k.weight";  // the tensor the byte mutations hit
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN(), kInf = std::numeric_limits<float>::infinity();

std::vector<Case> cases() {
  auto bytes = [](const std::string& name, std::function<Bytes()> f) {
    return [name, f] { return write(name, f()); };
  };
  auto meta = [](const std::string& name, Edit e) { return [name, e] { return edited(name, e); }; };
  auto u32 = [&](const std::string& key, uint32_t v) {
    return meta(key + "=" + std::to_string(v) + ".gguf", [key, v](ModelCopy& m) { m.writer().set_u32(key, v); });
  };
  auto f32 = [&](const std::string& key, float v) {
    return meta(key + "=" + std::to_string(v) + ".gguf", [key, v](ModelCopy& m) { m.writer().set_f32(key, v); });
  };

  std::vector<Case> c = {
      // The file's structure.
      {"empty", bytes("empty.gguf", [] { return Bytes{}; }), "too short for a header"},
      {"header_only", bytes("header.gguf", [] { return truncated(stories(), 10); }), "too short"},
      {"truncated_in_metadata", bytes("t_meta.gguf", [] { return truncated(stories(), 5000); }), "truncated"},
      {"truncated_in_tensor_infos", bytes("t_info.gguf", [] { return truncated(stories(), 13000); }), "past the end"},
      {"truncated_in_data", bytes("t_data.gguf", [] { return truncated(stories(), stories().size() / 2); }), "past the end"},
      {"truncated_by_one_byte", bytes("t_one.gguf", [] { return truncated(stories(), stories().size() - 1); }), "past the end"},
      {"bad_magic", bytes("magic.gguf", [] { return with<uint32_t>(stories(), 0, 0x46554746); }), "bad magic"},
      {"version_1", bytes("v1.gguf", [] { return with<uint32_t>(stories(), 4, 1); }), "version 1"},
      {"version_99", bytes("v99.gguf", [] { return with<uint32_t>(stories(), 4, 99); }), "unsupported GGUF version"},
      {"big_endian", bytes("be.gguf", [] { return with<uint32_t>(stories(), 4, 0x03000000); }), "big-endian"},
      {"huge_tensor_count", bytes("n_t.gguf", [] { return with<uint64_t>(stories(), 8, uint64_t{1} << 62); }), "too large"},
      {"huge_key_count", bytes("n_kv.gguf", [] { return with<uint64_t>(stories(), 16, uint64_t{1} << 62); }), "too large"},
      {"huge_key_length", bytes("keylen.gguf", [] { return with<uint64_t>(stories(), 24, uint64_t{1} << 62); }), "past the end"},
      {"unknown_value_type", bytes("vtype.gguf", [] {
         return with<uint32_t>(stories(), value_at(stories(), "general.architecture") - 4, 99);
       }), "unknown value type"},
      {"huge_array_count", bytes("arr.gguf", [] {
         return with<uint64_t>(stories(), value_at(stories(), "tokenizer.ggml.tokens") + 4, uint64_t{1} << 40);
       }), "past the end"},
      {"string_as_u32", bytes("strtype.gguf", [] {  // general.architecture's type says u32
         return with<uint32_t>(stories(), value_at(stories(), "general.architecture") - 4, 4);
       }), nullptr},
      {"duplicate_key", bytes("dupkey.gguf", [] {
         return renamed(stories(), "llama.context_length", "general.architecture");
       }), "duplicate metadata key"},
      {"duplicate_tensor", bytes("duptensor.gguf", [] { return renamed(stories(), blk, "blk.0.attn_q.weight"); }),
       "duplicate tensor name"},
      {"zero_dimensions", bytes("dims0.gguf", [] { return with<uint32_t>(stories(), info_at(stories(), blk).n_dims, 0); }),
       "dimensions"},
      {"five_dimensions", bytes("dims5.gguf", [] { return with<uint32_t>(stories(), info_at(stories(), blk).n_dims, 5); }),
       nullptr},
      {"zero_extent", bytes("ne0.gguf", [] { return with<uint64_t>(stories(), info_at(stories(), blk).ne0, 0); }),
       "invalid dimension"},
      {"shape_overflow", bytes("overflow.gguf", [] {
         Bytes b = with<uint64_t>(stories(), info_at(stories(), blk).ne0, uint64_t{1} << 40);
         return with<uint64_t>(b, info_at(stories(), blk).ne0 + 8, uint64_t{1} << 40);
       }), nullptr},
      {"unknown_ggml_type", bytes("gtype.gguf", [] { return with<uint32_t>(stories(), info_at(stories(), blk).type, 1000); }),
       "unknown ggml type"},
      {"offset_past_end", bytes("offend.gguf", [] {
         return with<uint64_t>(stories(), info_at(stories(), blk).offset, uint64_t{1} << 50);
       }), "past the end"},
      {"offset_misaligned", bytes("offmis.gguf", [] {
         return with<uint64_t>(stories(), info_at(stories(), blk).offset, 278784 + 4);
       }), "not a multiple of the alignment"},
      {"overlapping_tensors", bytes("overlap.gguf", [] {
         return with<uint64_t>(stories(), info_at(stories(), blk).offset, 262400);  // attn_q's offset
       }), "overlap"},
      {"alignment_1", u32("general.alignment", 1), ""},
      // Hyper-parameters and tensors that do not match.
      {"block_count_5m", u32("llama.block_count", 5000000), "tensors per layer"},
      {"block_count_2g", u32("llama.block_count", 0x7fffffff), "tensors per layer"},
      {"block_count_fewer", u32("llama.block_count", 4), "is not part of layers 0..3"},
      {"block_count_zero", u32("llama.block_count", 0), "out of range"},
      {"block_count_string", meta("bcs.gguf", [](ModelCopy& m) { m.writer().set_string("llama.block_count", "5"); }),
       "has type string"},
      {"embedding_length_wrong", u32("llama.embedding_length", 128), "token_embd.weight must have shape"},
      {"head_count_zero", u32("llama.attention.head_count", 0), "out of range"},
      {"head_count_not_divisor", u32("llama.attention.head_count", 7), "not a multiple"},
      {"head_count_kv_3", u32("llama.attention.head_count_kv", 3), "not a multiple"},
      {"rope_dims_odd", u32("llama.rope.dimension_count", 7), "must be even"},
      {"context_length_huge", meta("ctx.gguf", [](ModelCopy& m) { m.writer().set_u64("llama.context_length", 1ull << 40); }),
       "out of range"},
      {"rms_eps_zero", f32("llama.attention.layer_norm_rms_epsilon", 0), "finite positive"},
      {"rms_eps_nan", f32("llama.attention.layer_norm_rms_epsilon", kNaN), "finite positive"},
      {"rms_eps_inf", f32("llama.attention.layer_norm_rms_epsilon", kInf), "finite positive"},
      {"freq_base_negative", f32("llama.rope.freq_base", -1), "finite positive"},
      {"freq_base_inf", f32("llama.rope.freq_base", kInf), "finite positive"},
      {"rope_freqs_zero", meta("rfz.gguf", [](ModelCopy& m) { m.add_f32("rope_freqs.weight", {4}, 0.0f); }),
       "rope_freqs.weight[0]"},
      {"rope_freqs_nan", meta("rfn.gguf", [](ModelCopy& m) { m.add_f32("rope_freqs.weight", {4}, kNaN); }),
       "rope_freqs.weight[0]"},
      {"bos_out_of_range", u32("tokenizer.ggml.bos_token_id", 512), "is not a token id"},
      {"eos_out_of_range", u32("tokenizer.ggml.eos_token_id", 1u << 31), "is not a token id"},
      {"architecture_unknown", meta("arch.gguf", [](ModelCopy& m) { m.writer().set_string("general.architecture", "rwkv"); }),
       "not supported"},
      {"tokenizer_unknown", meta("tokm.gguf", [](ModelCopy& m) { m.writer().set_string("tokenizer.ggml.model", "bert"); }),
       "not supported"},
      {"tokenizer_missing", meta("tokn.gguf", [](ModelCopy& m) { m.writer().remove("tokenizer.ggml.tokens"); }), "missing"},
      {"scores_wrong_length", meta("scores.gguf", [](ModelCopy& m) { m.writer().set_f32_array("tokenizer.ggml.scores", {1, 2}); }),
       "wrong length"},
      {"tensor_missing", [] { return edited("miss.gguf", [](ModelCopy&) {}, drop("blk.2.attn_v.weight")); },
       "tensor 'blk.2.attn_v.weight' missing"},
      {"tensor_transposed", [] {
         return edited("transp.gguf", [](ModelCopy& m) { m.add_f32("blk.4.ffn_down.weight", {64, 172}, 0); },
                       drop("blk.4.ffn_down.weight"));
       }, "expected [172, 64]"},
      {"tensor_3d", [] {
         return edited("t3d.gguf", [](ModelCopy& m) { m.add_f32("blk.1.attn_norm.weight", {64, 1, 1}, 1); },
                       drop("blk.1.attn_norm.weight"));
       }, "expected [64]"},
      {"extra_layer_tensor", meta("extra.gguf", [](ModelCopy& m) { m.add_f32("blk.9.attn_norm.weight", {64}, 1); }),
       "is not part of layers"},
      {"unloadable_type", [] {
         return edited("q81.gguf", [](ModelCopy& m) {
           static const Bytes zeros(64 / 32 * 36 * 64);
           m.writer().add_tensor("blk.0.attn_q.weight", gguf::kQ8_1, {64, 64}, zeros.data(), zeros.size());
         }, drop("blk.0.attn_q.weight"));
       }, "which qmm cannot load"},
      // Numbers that are not numbers: the logits are not finite.
      {"nan_output_norm", [] {
         return edited("nan.gguf", [](ModelCopy& m) { m.add_f32("output_norm.weight", {64}, kNaN); }, drop("output_norm.weight"));
       }, "logits are not finite"},
      {"inf_embedding", [] {
         return edited("inf.gguf", [](ModelCopy& m) { m.add_f32("token_embd.weight", {64, 512}, kInf); }, drop("token_embd.weight"));
       }, "logits are not finite"},
      // The synthetic model, mutated.
      {"synth_tiny", [] { return tiny(); }, ""},
      {"synth_truncated", bytes("tiny_t.gguf", [] { Bytes b = read(tiny()); return truncated(b, b.size() - 100); }),
       "past the end"},
      {"synth_extra_layer", [] {
         return edited("tiny_bc.gguf", [](ModelCopy& m) { m.writer().set_u32("llama.block_count", 3); }, {}, tiny());
       }, "needs 9 tensors per layer"},
      {"synth_block_count_1", [] {
         return edited("tiny_bc1.gguf", [](ModelCopy& m) { m.writer().set_u32("llama.block_count", 1); }, {}, tiny());
       }, "is not part of layers 0..0"},
      {"synth_q4_rows_odd", [] {
         return edited("tiny_odd.gguf", [](ModelCopy& m) { m.add_f32("blk.0.ffn_up.weight", {64, 191}, 0.01f); },
                       drop("blk.0.ffn_up.weight"), tiny());
       }, "expected [64, 192]"},
      // A Mixture-of-Experts model, mutated: expert counts, 3-D shapes, truncation.
      {"moe_tiny", [] { return tiny_moe(); }, ""},
      {"moe_truncated", bytes("moe_t.gguf", [] { Bytes b = read(tiny_moe()); return truncated(b, b.size() - 100); }),
       "past the end"},
      {"moe_used_beyond_count", [] {
         return edited("moe_used.gguf", [](ModelCopy& m) { m.writer().set_u32("qwen3moe.expert_used_count", 4000000000u); }, {}, tiny_moe());
       }, "qwen3moe.expert_used_count = 4000000000 is out of range"},
      {"moe_count_huge", [] {
         return edited("moe_count.gguf", [](ModelCopy& m) { m.writer().set_u32("qwen3moe.expert_count", 1024); }, {}, tiny_moe());
       }, "expected [64, 1024]"},
      {"moe_zero_experts", [] {
         return edited("moe_zero.gguf", [](ModelCopy& m) { m.writer().set_u32("qwen3moe.expert_count", 0); }, {}, tiny_moe());
       }, "qwen3moe.expert_count = 0 is out of range"},
      {"moe_expert_width_huge", [] {
         return edited("moe_ff.gguf", [](ModelCopy& m) { m.writer().set_u32("qwen3moe.expert_feed_forward_length", 0x7fffffffu); }, {},
                       tiny_moe());
       }, "expected [64, 2147483647, 16]"},
      {"moe_2d_experts", [] {
         return edited("moe_2d.gguf", [](ModelCopy& m) { m.add_f32("blk.1.ffn_down_exps.weight", {64, 1024}, 0.01f); },
                       drop("blk.1.ffn_down_exps.weight"), tiny_moe());
       }, "expected [64, 64, 16]"},
      // Legal but extreme.
      {"keys_60000", [] { return many("keys.gguf", 60000, 0); }, "key 'llama.embedding_length' missing"},
      {"tensors_20000", [] { return many("tensors.gguf", 10, 20000); }, "missing"},
      {"one_long_row", [] {
         gguf::Writer w;
         static const std::vector<uint16_t> h(1 << 20, 0x3c00);  // f16 1.0
         w.add_tensor("long.weight", gguf::kF16, {1 << 20}, h.data(), h.size() * 2);
         w.write(work_dir() / "long.gguf");
         return work_dir() / "long.gguf";
       }, "missing"},
      // Paths that are not regular files.
      {"fifo", [] {
         const fs::path p = work_dir() / "fifo.gguf";
         ::mkfifo(p.c_str(), 0600);
         return p;
       }, "not a regular file"},
      {"directory", [] { return work_dir(); }, "not a regular file"},
      {"symlink_loop", [] {
         const fs::path p = work_dir() / "loop.gguf";
         std::error_code ec;
         fs::create_symlink(p, p, ec);
         return p;
       }, "cannot open"},
      {"dangling_symlink", [] {
         const fs::path p = work_dir() / "dangling.gguf";
         std::error_code ec;
         fs::create_symlink(work_dir() / "nowhere", p, ec);
         return p;
       }, "cannot open"},
      {"char_device", [] { return fs::path("/dev/zero"); }, "not a regular file"},
  };
  return c;
}

// Memory the qmm process takes on a trivial input (its runtime, the sanitizers' included).
size_t baseline_rss() {
  static const size_t rss = [] {
    const fs::path p = write("tiny_header.gguf", truncated(stories(), 24));
    return run_qmm({"gguf", p}).max_rss;
  }();
  return rss;
}

void check_run(const std::string& what, const ChildResult& r, size_t file_size) {
  SCOPED_TRACE(what);
  EXPECT_FALSE(r.timed_out) << "still running after 5 s";
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << "\n" << r.err;
  EXPECT_TRUE(r.code >= 0 && r.code < 128) << r.code;
  if (r.code != 0) {  // the error is the last line of stderr, the only one from qmm (run prints info lines first)
    const std::string err = "\n" + r.err;  // every line starts after a '\n'
    const size_t last = err.rfind('\n', err.size() - 2);
    EXPECT_TRUE(err.ends_with("\n") && err.find("\nqmm ") == last) << "not a one-line error: " << r.err;
  }
  const size_t limit = baseline_rss() + 4 * file_size + (size_t{64} << 20);
  if (std::getenv("QMM_HOSTILE_VERBOSE")) {
    std::printf("  %-12s exit %d, %.3f s, peak RSS %.1f MiB (baseline %.1f, file %.2f MiB)\n", what.c_str(), r.code,
                r.seconds, static_cast<double>(r.max_rss) / (1 << 20), static_cast<double>(baseline_rss()) / (1 << 20),
                static_cast<double>(file_size) / (1 << 20));
  }
  EXPECT_LE(r.max_rss, limit) << "peak RSS " << (r.max_rss >> 20) << " MiB";
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class Hostile : public ::testing::TestWithParam<Case> {};

TEST_P(Hostile, OneLineErrorOrResultInBoundedTimeAndMemory) {
  QMM_REQUIRE_STORIES260K();
  const Case& c = GetParam();
  const fs::path path = c.make();
  struct stat st {};
  const size_t size = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0;
  const fs::path out = work_dir() / (c.name + ".out.gguf");
  check_run("qmm gguf", run_qmm({"gguf", path}), size);
  const ChildResult run = run_qmm({"run", "-m", path, "-n", "4", "--temp", "0", "-t", "1"});
  check_run("qmm run", run, size);
  check_run("qmm quantize", run_qmm({"quantize", path, out, "q8_0", "-t", "64", "-f"}), size);
  if (c.run_error && *c.run_error) {
    EXPECT_NE(run.code, 0);
    EXPECT_NE(run.err.find(c.run_error), std::string::npos) << "qmm run's error: " << run.err;
  } else if (c.run_error) {
    EXPECT_EQ(run.code, 0) << run.err;
  }
  std::error_code ec;
  fs::remove(out, ec);
}

INSTANTIATE_TEST_SUITE_P(Files, Hostile, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(Hostile, AtLeastFortyKinds) { EXPECT_GE(cases().size(), 40u); }

// A file without a vocabulary (llama.cpp's tokenizer.ggml.model = no_vocab, no token arrays) can be
// inspected; running it is a one-line error saying why.
TEST(Hostile, NoVocabularyIsInspectableAndRunSaysWhy) {
  QMM_REQUIRE_STORIES260K();
  const fs::path path = edited("no_vocab.gguf", [](ModelCopy& m) {
    m.writer().set_string("tokenizer.ggml.model", "no_vocab");
    for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) m.writer().remove(key);
  });
  const ChildResult info = run_qmm({"gguf", path});
  EXPECT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("no_vocab"), std::string::npos) << info.out;
  const ChildResult run = run_qmm({"run", "-m", path, "-n", "4", "--temp", "0", "-t", "1"});
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("the model has no vocabulary (tokenizer.ggml.model = no_vocab)"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

}  // namespace
}  // namespace qmm::test
