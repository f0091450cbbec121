// Cuts generated text at the first of the request's `stop` strings. Text that could still be
// the start of a stop string is held back until the next piece decides, so a stop string
// split over several tokens is never sent.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace qmm::serve {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}
  // Appends a piece of generated text; returns the text now certain to be sent. Once a stop
  // string appeared, stopped() is true and the text from it on is dropped.
  std::string push(std::string_view piece);
  std::string flush();  // the held-back tail, when generation ends for another reason
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace qmm::serve
