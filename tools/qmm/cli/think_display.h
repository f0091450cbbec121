// How `qmm chat` shows a reasoning model's thinking (Qwen 3, DeepSeek R1: "<think>...</think>"
// before the answer): as it is, dimmed (on a colour terminal), or hidden. The text is streamed,
// so a marker may arrive split over pieces: what may be the start of one is held back until the
// next piece says. Only the display changes: the conversation keeps the reply as generated (the
// chat templates drop old thinking themselves).
#pragma once
#include <string>
#include <string_view>

namespace qmm::cli {

class ThinkDisplay {
 public:
  enum class Mode { show, dim, hide };
  explicit ThinkDisplay(Mode m) : mode_(m) {}

  // The text to print for the next piece of the reply.
  std::string push(std::string_view text) {
    held_ += text;
    std::string out;
    for (;;) {
      const std::string_view marker = in_think_ ? kClose : kOpen;
      const size_t at = held_.find(marker);
      if (at == std::string::npos) {
        const size_t keep = partial_marker(held_, marker);
        out += shown(std::string_view(held_).substr(0, held_.size() - keep));
        held_.erase(0, held_.size() - keep);
        return out;
      }
      out += shown(std::string_view(held_).substr(0, at));
      if (mode_ == Mode::dim) out += in_think_ ? std::string(kClose) + kReset : kDim + std::string(kOpen);
      if (mode_ == Mode::show) out += marker;
      skip_space_ = in_think_ && mode_ == Mode::hide;  // the blank lines after a hidden block
      in_think_ = !in_think_;
      held_.erase(0, at + marker.size());
    }
  }
  // The rest, at the end of the reply (a block left open is closed).
  std::string flush() {
    std::string out = shown(held_);
    held_.clear();
    if (in_think_ && mode_ == Mode::dim) out += kReset;
    in_think_ = false;
    return out;
  }

 private:
  static constexpr std::string_view kOpen = "<think>", kClose = "</think>";
  static constexpr const char* kDim = "\x1b[2m";
  static constexpr const char* kReset = "\x1b[0m";

  // The length of the longest end of `s` that begins `marker` (and is shorter than it).
  static size_t partial_marker(std::string_view s, std::string_view marker) {
    for (size_t n = std::min(s.size(), marker.size() - 1); n > 0; --n) {
      if (s.substr(s.size() - n) == marker.substr(0, n)) return n;
    }
    return 0;
  }
  std::string shown(std::string_view s) {
    if (in_think_ && mode_ == Mode::hide) return {};
    if (skip_space_) {
      const size_t first = s.find_first_not_of(" \t\r\n");
      if (first == std::string_view::npos) return {};
      s.remove_prefix(first);
      skip_space_ = false;
    }
    return std::string(s);
  }

  Mode mode_;
  bool in_think_ = false, skip_space_ = false;
  std::string held_;
};

}  // namespace qmm::cli
