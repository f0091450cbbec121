// /save and /load in a build without nlohmann-json: each says so.
#include "chat_file.h"
#include "core/error.h"

namespace qmm::cli {

void save_conversation(const std::string&, const std::vector<llm::ChatMessage>&) {
  fail(Status::io, "/save needs nlohmann-json, which this build of qmm has not");
}

std::vector<llm::ChatMessage> load_conversation(const std::string&) {
  fail(Status::io, "/load needs nlohmann-json, which this build of qmm has not");
}

}  // namespace qmm::cli
