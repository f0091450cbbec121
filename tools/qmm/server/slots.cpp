// `qmm serve`'s slots (llama-server's routes): GET /slots, and POST /slots/{id}?action=save |
// restore | erase with {"filename": NAME} under --slot-save-path. A filename is one plain name in
// that directory (no path, no leading dot); what restore reads back is checked by slot_file.h.
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "engine_backend.h"

namespace qmm::serve {
namespace {

using nlohmann::json;

size_t parse_slot(const std::string& id, size_t n_slots) {
  const bool digits = !id.empty() && id.size() <= 4 && id.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoul(id) >= n_slots) {
    throw ApiError(400, "slot '" + id.substr(0, 32) + "' does not exist (this server has slots 0.." + std::to_string(n_slots - 1) + ")",
                   "id_slot");
  }
  return std::stoul(id);
}

// The body's filename: one plain name, nothing else in the body.
std::string parse_filename(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception&) {
    throw ApiError(400, "the body is not valid JSON (send {\"filename\": NAME})");
  }
  if (!j.is_object()) throw ApiError(400, "the body must be a JSON object (send {\"filename\": NAME})");
  for (const auto& [key, value] : j.items()) {
    if (key != "filename") throw ApiError(400, "'" + key + "' is not a field of a slot action (only 'filename')", key);
  }
  const auto it = j.find("filename");
  if (it == j.end() || !it->is_string()) throw ApiError(400, "'filename' (a string) is required", "filename");
  const std::string name = it->get<std::string>();
  bool plain = !name.empty() && name.size() <= 255 && name[0] != '.';
  for (const unsigned char c : name) plain = plain && c >= 0x20 && c != 0x7f && c != '/' && c != '\\';
  if (!plain) {
    throw ApiError(400, "'filename' must be one plain file name (1..255 bytes, no '/', '\\' or control characters, not starting with '.')",
                   "filename");
  }
  return name;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void EngineBackend::set_slot_save_path(std::string dir) { slot_save_path_ = std::move(dir); }

std::string EngineBackend::slots() const {
  json out = json::array();
  std::lock_guard lock(mu_);
  if (!gen_) throw ApiError(503, "the server is shutting down");
  gen_->call([&](llm::Generator& g) {
    for (size_t i = 0; i < g.options().n_slots; ++i) {
      const int s = static_cast<int>(i);
      out.push_back({{"id", i},
                     {"id_task", g.busy(s) ? static_cast<int64_t>(g.task(s)) : int64_t{-1}},
                     {"n_ctx", g.options().n_ctx},
                     {"is_processing", g.busy(s)},
                     {"n_cached", g.cached(s).size()}});
    }
  });
  return out.dump();
}

std::string EngineBackend::slot_action(const std::string& id, const std::string& action, const std::string& body) {
  const size_t slot = parse_slot(id, opt_.n_slots);
  const int s = static_cast<int>(slot);
  json out{{"id_slot", slot}};
  std::string path;
  if (action == "save" || action == "restore") {
    if (slot_save_path_.empty()) {
      throw ApiError(501, "slots are saved and restored only with --slot-save-path DIR", "action", "not_supported");
    }
    const std::string name = parse_filename(body);
    path = (std::filesystem::path(slot_save_path_) / name).string();
    out["filename"] = name;
    if (action == "restore" && !std::filesystem::exists(path)) throw ApiError(404, "the slot file '" + name + "' does not exist", "filename");
  } else if (action == "erase") {
    if (!body.empty() && body != "{}") throw ApiError(400, "erase takes no body", "action");
  } else {
    throw ApiError(400, "'action' must be save, restore or erase, not '" + action.substr(0, 32) + "'", "action");
  }
  std::lock_guard lock(mu_);
  if (!gen_) throw ApiError(503, "the server is shutting down");
  const auto t0 = std::chrono::steady_clock::now();
  try {
    gen_->call([&](llm::Generator& g) {
      if (action == "save") {
        out["n_written"] = g.save_slot(s, path);
        out["n_saved"] = g.cached(s).size();
        out["timings"] = {{"save_ms", ms_since(t0)}};
      } else if (action == "restore") {
        out["n_read"] = g.restore_slot(s, path);
        out["n_restored"] = g.cached(s).size();
        out["timings"] = {{"restore_ms", ms_since(t0)}};
      } else {
        out["n_erased"] = g.erase_slot(s);
      }
    });
  } catch (const Error& e) {
    if (e.status() == Status::unsupported) throw ApiError(409, e.what(), "id_slot", "slot_busy");
    if (e.status() == Status::invalid_argument) throw ApiError(400, e.what(), "filename");
    throw ApiError(500, e.what());
  } catch (const std::exception& e) {  // (out of memory)
    throw ApiError(500, e.what());
  }
  return out.dump();
}

}  // namespace qmm::serve
