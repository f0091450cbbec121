// llama.cpp as an oracle: runs scripts/llamacpp_batch.mjs (the prebuilt CPU build of the
// node-llama-cpp npm package that scripts/llamacpp_setup.sh installs) on a JSON request, in one
// node process. Shared by the llama.cpp comparison tests.
#pragma once
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace qmm::test {

// `s` as a JSON string literal (control characters escaped, UTF-8 passed through).
std::string json_string(std::string_view s);

// Where node-llama-cpp is installed: $QMM_LLAMACPP_DIR, else ~/.cache/qmm-llamacpp.
std::string llamacpp_dir();

// Why llama.cpp cannot be asked here (node or node-llama-cpp missing), or "" when it can.
std::string llamacpp_missing();

// Runs the batch script on `request` (JSON, see the script), writing its answers to `answers`.
// False, with `why`, when node fails.
bool run_llamacpp(const std::string& request_json, const std::string& answers, std::string& why);

// The decimal ids that remain on a line of answers.
std::vector<int32_t> read_ids(std::istringstream& in);

// The batch script's answers, by model index m and prompt or string index i: tokenizations
// (T m i ids), prompt tokens (P), greedy continuations (G), the top probabilities at each step
// (L m i step id:p ...), and a model's error (E m text).
struct OracleAnswers {
  std::map<std::pair<size_t, size_t>, std::vector<int32_t>> strings, prompts, greedy;
  std::map<std::tuple<size_t, size_t, size_t>, std::vector<std::pair<int32_t, double>>> top;
  std::map<size_t, std::string> errors;
};
OracleAnswers read_answers(std::istream& in);

// Softmax of n logits, in double.
std::vector<double> softmax(const float* logits, size_t n);

// One greedy step of qmm against llama.cpp's: `worst` grows to the largest |Δp| over llama.cpp's
// top ids; where qmm's pick `next` is not llama.cpp's `want`, `where` says how (llama.cpp's top
// probabilities and qmm's for the same ids) and `tie` whether llama.cpp's own probabilities of
// its pick and of qmm's differ by less than `tie_below` (there a comparison ends, equal).
struct StepCheck {
  bool differs = false, tie = false;
  std::string where;
};
StepCheck check_step(const std::vector<double>& probs, const std::vector<std::pair<int32_t, double>>& top, int32_t next,
                     int32_t want, size_t step, double tie_below, double& worst);

}  // namespace qmm::test
