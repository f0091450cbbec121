#include "stop_matcher.h"

#include <algorithm>

namespace qmm::serve {

std::string StopMatcher::push(std::string_view piece) {
  if (stopped_) return {};
  pending_.append(piece);
  size_t first = std::string::npos;
  for (const std::string& s : stops_) first = std::min(first, pending_.find(s));
  if (first != std::string::npos) {
    std::string out = pending_.substr(0, first);
    pending_.clear();
    stopped_ = true;
    return out;
  }
  // Hold back the longest tail that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    for (size_t k = std::min(s.size() - 1, pending_.size()); k > hold; --k) {
      if (std::string_view(pending_).substr(pending_.size() - k) == std::string_view(s).substr(0, k)) {
        hold = k;
        break;
      }
    }
  }
  std::string out = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StopMatcher::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace qmm::serve
