// llama.cpp as an oracle: runs scripts/llamacpp_batch.mjs (the prebuilt CPU build of the
// node-llama-cpp npm package that scripts/llamacpp_setup.sh installs) on a JSON request, in one
// node process. Shared by the llama.cpp comparison tests.
#pragma once
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
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

}  // namespace qmm::test
