// Model files qmm did not write: llama.cpp's own random-weight models of each architecture qmm
// runs (test-llama-archs -o, from Debian's llama.cpp-tests package, which
// scripts/llamacpp_native.sh fetches beside Debian's llama.cpp), in F32 and quantized by
// llama.cpp's llama-quantize to Q8_0, Q4_0, Q4_K_M, Q5_K_M and Q6_K, must load in qmm and give llama.cpp's greedy
// tokens (node-llama-cpp, the oracle of the other llama.cpp tests) for random prompts of token
// ids, up to a near-tie, with next-token probabilities close to llama.cpp's. These files carry
// what qmm's own files never do: biases on every projection, per-tensor scales and input scales,
// an output bias, a reranking head, the sliding-window pattern as one flag per layer, and
// norm gains around zero. Skips, saying why, when Debian's llama.cpp or node-llama-cpp is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "llamacpp_oracle.h"
#include "llm/model.h"

namespace qmm::llm {
namespace {

const char* const kArchs[] = {"llama", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "phi3"};
const char* const kTypes[] = {"F32", "Q8_0", "Q4_0", "Q4_K_M", "Q5_K_M", "Q6_K"};  // the file as written, then llama-quantize's
constexpr size_t kTokens = 16, kTop = 4, kPrompts = 3, kVocab = 128;
// Near-ties end a comparison (see test_llamacpp.cpp): these models' weights have a standard
// deviation of 0.1, so their next-token distributions are nearly flat and ties are common.
// Probabilities are compared absolutely; the largest differences seen (2026-11-26) were
// 1.8e-7 (F32), 2.0e-5 (Q8_0), 9.0e-5 (Q4_0), 1.0e-4 (Q4_K_M), 8.7e-5 (Q5_K_M), 9.2e-5 (Q6_K).
constexpr double kTie = 1e-3;
double prob_tolerance(const std::string& type) { return type == "F32" ? 1e-5 : 2e-3; }

std::string native_bin() {
  if (const char* d = std::getenv("QMM_LLAMACPP_NATIVE"); d && *d) return std::string(d) + "/bin";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.cache/qmm-llamacpp-native/bin";
}

std::vector<std::vector<int32_t>> prompts() {
  std::mt19937 rng(23);
  std::vector<std::vector<int32_t>> p(kPrompts);
  for (auto& ids : p) {
    ids.resize(4 + rng() % 9);
    for (int32_t& id : ids) id = static_cast<int32_t>(rng() % kVocab);
  }
  return p;
}

class LlamaCppArchs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = test::llamacpp_missing();
    if (!skip_.empty()) return;
    const std::string bin = native_bin();
    if (!std::filesystem::exists(bin + "/test-llama-archs") || !std::filesystem::exists(bin + "/llama-quantize")) {
      skip_ = "Debian's llama.cpp-tests and llama.cpp-tools are not in " + bin +
              " (scripts/llamacpp_native.sh fetches them; the Debian mirror could not be reached)";
      return;
    }
    work_ = std::filesystem::temp_directory_path() / ("qmm-archs-" + std::to_string(::getpid()));
    std::filesystem::create_directories(work_);
    std::string filter;
    for (const char* a : kArchs) filter += (filter.empty() ? "^(" : "|") + std::string(a);
    const std::string gen = bin + "/test-llama-archs -s 7 -a '" + filter + ")$' -o " + work_.string() + " > " +
                            (work_ / "gen.log").string() + " 2>&1";
    if (std::system(gen.c_str()) != 0) {
      failure_ = "test-llama-archs failed: " + gen;
      return;
    }
    std::ofstream req(work_ / "request.json");
    req << "{\"models\": [";
    for (const char* arch : kArchs) {
      const std::string f32 = (work_ / (std::string(arch) + "-dense.gguf")).string();
      for (const char* type : kTypes) {
        std::string path = f32;
        if (std::string(type) != "F32") {
          path = (work_ / (std::string(arch) + "-" + type + ".gguf")).string();
          const std::string q = bin + "/llama-quantize " + f32 + " " + path + " " + type + " > " + (work_ / "quantize.log").string() + " 2>&1";
          if (std::system(q.c_str()) != 0) {
            failure_ = "llama-quantize failed: " + q;
            return;
          }
        }
        req << (files_.empty() ? "" : ", ") << "{\"path\": " << test::json_string(path) << ", \"n\": " << kTokens
            << ", \"top\": " << kTop << ", \"ctx\": 256, \"prompts\": [";
        const auto ps = prompts();
        for (size_t p = 0; p < ps.size(); ++p) {
          req << (p ? ", [" : "[");
          for (size_t i = 0; i < ps[p].size(); ++i) req << (i ? ", " : "") << ps[p][i];
          req << "]";
        }
        req << "]}";
        files_.push_back({arch, type, path});
      }
    }
    req << "]}\n";
    req.close();
    const std::string out = (work_ / "answers.txt").string();
    if (!test::run_llamacpp((work_ / "request.json").string(), out, failure_)) return;
    std::ifstream in(out);
    answers_ = test::read_answers(in);
  }
  static void TearDownTestSuite() {
    if (!work_.empty()) std::filesystem::remove_all(work_);
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(failure_.empty()) << failure_;
  }

  struct File {
    std::string arch, type, path;
  };
  static inline std::string skip_, failure_;
  static inline std::filesystem::path work_;
  static inline std::vector<File> files_;
  static inline test::OracleAnswers answers_;
};

TEST_F(LlamaCppArchs, GreedyTokensEqualLlamaCpp) {
  Context ctx(1);
  const auto ps = prompts();
  size_t compared = 0, ties = 0;
  std::map<std::string, double> worst_of;  // per type
  for (size_t m = 0; m < files_.size(); ++m) {
    const std::string what = files_[m].arch + " " + files_[m].type;
    ASSERT_EQ(answers_.errors.count(m), 0u) << what << ": llama.cpp: " << answers_.errors[m];
    std::optional<Model> loaded;
    try {
      loaded.emplace(Model::load(files_[m].path, {}, ctx.pool()));
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": " << e.what();
      continue;
    }
    const Model& model = *loaded;
    for (size_t p = 0; p < ps.size(); ++p) {
      const std::vector<int32_t>& want = answers_.greedy[{m, p}];
      ASSERT_FALSE(want.empty()) << what << ", prompt " << p << ": no answer from llama.cpp";
      State s(model, 256, ps[p].size(), ctx, 1, {KvType::f32, KvType::f32});
      const float* logits = forward(model, s, ps[p].data(), ps[p].size());
      std::vector<int32_t> got;
      std::string where;
      double worst = 0;
      for (size_t step = 0; step < want.size(); ++step) {
        const std::vector<double> probs = test::softmax(logits, model.config().n_vocab);
        const auto next = static_cast<int32_t>(std::max_element(probs.begin(), probs.end()) - probs.begin());
        const test::StepCheck check = test::check_step(probs, answers_.top[{m, p, step}], next, want[step], step, kTie, worst);
        if (check.differs) {
          where = check.where;
          if (check.tie) {
            ++ties;
            std::printf("tie: %s, prompt %zu, %s\n", what.c_str(), p, where.c_str());
            got = want;
            break;
          }
          got.push_back(next);
          break;
        }
        got.push_back(next);
        logits = forward(model, s, &next, 1);
      }
      EXPECT_EQ(got, want) << what << ", prompt " << p << "; " << where;
      EXPECT_LE(worst, prob_tolerance(files_[m].type)) << what << ", prompt " << p;
      worst_of[files_[m].type] = std::max(worst_of[files_[m].type], worst);
      ++compared;
    }
  }
  std::printf("%zu greedy continuations of llama.cpp's own model files compared, %zu ended at a tie\n", compared, ties);
  for (const auto& [type, w] : worst_of) std::printf("largest probability difference, %s: %.2e\n", type.c_str(), w);
}

}  // namespace
}  // namespace qmm::llm
