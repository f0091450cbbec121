// /save and /load of `qmm chat`: a conversation as a JSON array of OpenAI messages,
// [{"role": "system"|"user"|"assistant", "content": "..."}], the body a server request would
// carry. With nlohmann-json (chat_file_json.cpp); a build without it says so (chat_file_off.cpp).
#pragma once
#include <string>
#include <vector>

#include "text/chat_template.h"

namespace qmm::cli {

// Both throw qmm::Error (io) with a one-line message: a file that cannot be written or read, or
// is not such an array.
void save_conversation(const std::string& path, const std::vector<llm::ChatMessage>& messages);
std::vector<llm::ChatMessage> load_conversation(const std::string& path);

}  // namespace qmm::cli
