#include "grammar_cache.h"

#include "core/error.h"
#include "protocol.h"

namespace qmm::serve {

std::shared_ptr<const llm::Grammar> GrammarCache::get(const std::string& gbnf, const std::string& param) {
  {
    std::lock_guard lock(mu_);
    for (auto it = lru_.begin(); it != lru_.end(); ++it) {
      if (it->first == gbnf) {
        lru_.splice(lru_.begin(), lru_, it);
        return lru_.front().second;
      }
    }
  }
  std::shared_ptr<const llm::Grammar> g;
  try {
    g = llm::Grammar::parse(gbnf);  // outside the lock: bounded, but not free
  } catch (const Error& e) {
    throw ApiError(400, "'" + param + "': " + e.what(), param);
  }
  std::lock_guard lock(mu_);
  ++compiled_;
  lru_.emplace_front(gbnf, g);
  if (lru_.size() > kEntries) lru_.pop_back();
  return g;
}

}  // namespace qmm::serve
