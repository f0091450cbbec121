#include <fstream>
#include <nlohmann/json.hpp>

#include "bounded_read.h"
#include "chat_file.h"
#include "core/error.h"

namespace qmm::cli {

namespace {
constexpr size_t kMaxBytes = size_t{64} << 20;  // a conversation is text: 64 MiB is far beyond any context
}

void save_conversation(const std::string& path, const std::vector<llm::ChatMessage>& messages) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const llm::ChatMessage& m : messages) j.push_back({{"role", m.role}, {"content", m.content}});
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail(Status::io, "cannot write " + path);
  f << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  f.close();
  if (!f) fail(Status::io, "cannot write " + path);
}

std::vector<llm::ChatMessage> load_conversation(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(Status::io, "cannot open " + path);
  const std::string text = read_all_bounded(f, kMaxBytes, path);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) fail(Status::io, path + ": not a JSON array of messages");
  std::vector<llm::ChatMessage> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const nlohmann::json& m = j[i];
    const std::string at = path + ": message " + std::to_string(i);
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
        !m["content"].is_string()) {
      fail(Status::io, at + " is not {\"role\": STRING, \"content\": STRING}");
    }
    const std::string role = m["role"].get<std::string>();
    if (role != "system" && role != "user" && role != "assistant") {
      fail(Status::io, at + ": role '" + role + "' is not system, user or assistant");
    }
    out.push_back({role, m["content"].get<std::string>()});
  }
  return out;
}

}  // namespace qmm::cli
