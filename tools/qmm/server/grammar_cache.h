// Compiled grammars by their GBNF text: a request repeating a schema (every request of an
// application does) compiles it once. A few recent grammars are kept (least recently used
// out). Thread-safe: the HTTP threads share it.
#pragma once
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "text/grammar.h"

namespace qmm::serve {

class GrammarCache {
 public:
  static constexpr size_t kEntries = 16;
  // The compiled grammar; ApiError 400 (param `param`) when it does not compile.
  std::shared_ptr<const llm::Grammar> get(const std::string& gbnf, const std::string& param);
  size_t compiled() const { return compiled_; }  // compilations so far (tests)

 private:
  std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<const llm::Grammar>>> lru_;  // most recent first
  size_t compiled_ = 0;
};

}  // namespace qmm::serve
