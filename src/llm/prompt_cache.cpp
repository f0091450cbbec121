#include "llm/prompt_cache.h"

#include <algorithm>

#include "core/error.h"
#include "llm/model.h"

namespace qmm::llm {

PromptCache::PromptCache(size_t budget, size_t block_kv_bytes, size_t block_tokens, Hash hash)
    : hash_(hash),
      budget_(budget), block_kv_bytes_(block_kv_bytes), block_tokens_(block_tokens) {
  check_arg(block_tokens >= 1 && hash != nullptr, "prompt cache: blocks of at least one token");
}

size_t PromptCache::entry_bytes() const {
  // The K/V and the tokens, plus the list node, the index node and the vectors' headers.
  return block_kv_bytes_ + block_tokens_ * sizeof(int32_t) + sizeof(Entry) + 96;
}

uint64_t PromptCache::block_hash(uint64_t parent, const int32_t* t, size_t n) {
  uint64_t h = parent ^ 0x9e3779b97f4a7c15ull;  // FNV-1a over the tokens' bytes, seeded by the parent
  for (size_t i = 0; i < n; ++i) {
    uint32_t v = static_cast<uint32_t>(t[i]);
    for (int b = 0; b < 4; ++b, v >>= 8) h = (h ^ (v & 0xff)) * 0x100000001b3ull;
  }
  return h;
}

void PromptCache::chain(std::span<const int32_t> tokens, std::vector<Iter>& out) const {
  out.clear();
  uint64_t h = 0;
  Entry* parent = nullptr;
  for (size_t b = 0; (b + 1) * block_tokens_ <= tokens.size(); ++b) {
    const int32_t* t = tokens.data() + b * block_tokens_;
    h = hash_(h, t, block_tokens_);
    auto [it, end] = index_.equal_range(h);
    // The hash only finds candidates: the parent and every token must be the prompt's.
    for (; it != end; ++it) {
      const Entry& e = *it->second;
      if (e.parent == parent && std::equal(e.tokens.begin(), e.tokens.end(), t)) break;
    }
    if (it == end) return;
    out.push_back(it->second);
    parent = &*it->second;
  }
}

size_t PromptCache::match(std::span<const int32_t> tokens) const {
  std::vector<Iter> c;
  chain(tokens, c);
  return c.size() * block_tokens_;
}

void PromptCache::touch(const std::vector<Iter>& c) {
  for (auto it = c.rbegin(); it != c.rend(); ++it) lru_.splice(lru_.begin(), lru_, *it);
}

// Evicts the least recently used entry without children that is not pinned (a block in use).
bool PromptCache::evict_one(const std::vector<Iter>& pinned) {
  for (auto it = lru_.end(); it != lru_.begin();) {
    --it;
    if (it->children > 0 || std::find(pinned.begin(), pinned.end(), it) != pinned.end()) continue;
    auto [i, end] = index_.equal_range(it->hash);
    for (; i != end; ++i) {
      if (i->second == it) {
        index_.erase(i);
        break;
      }
    }
    if (it->parent) --it->parent->children;
    bytes_ -= entry_bytes();
    lru_.erase(it);
    return true;
  }
  return false;
}

size_t PromptCache::restore(State& s, size_t seq, std::span<const int32_t> tokens, size_t have, size_t limit) {
  std::vector<Iter> c;
  chain(tokens.first(std::min(limit, tokens.size())), c);
  const size_t n = c.size() * block_tokens_;
  if (n <= have) return have;
  touch(c);
  // Whole blocks from the one `have` falls in (its first positions hold the same tokens).
  const size_t from = have / block_tokens_;
  s.truncate(seq, from * block_tokens_);
  for (size_t b = from; b < c.size(); ++b) s.kv_write(seq, b * block_tokens_, block_tokens_, c[b]->kv.data());
  return n;
}

void PromptCache::store(const State& s, size_t seq, std::span<const int32_t> tokens) {
  check_arg(s.pos(seq) >= tokens.size(), "prompt cache: the sequence holds fewer positions than its tokens");
  std::vector<Iter> c;
  chain(tokens, c);
  touch(c);
  Entry* parent = c.empty() ? nullptr : &*c.back();
  uint64_t h = c.empty() ? 0 : c.back()->hash;
  for (size_t b = c.size(); (b + 1) * block_tokens_ <= tokens.size(); ++b) {
    if (entry_bytes() > budget_) break;
    while (bytes_ + entry_bytes() > budget_) {
      if (!evict_one(c)) break;
    }
    if (bytes_ + entry_bytes() > budget_) break;
    const int32_t* t = tokens.data() + b * block_tokens_;
    Entry e;
    e.hash = h = hash_(h, t, block_tokens_);
    e.parent = parent;
    e.tokens.assign(t, t + block_tokens_);
    e.kv.resize(block_kv_bytes_);
    s.kv_read(seq, b * block_tokens_, block_tokens_, e.kv.data());
    lru_.push_front(std::move(e));
    const Iter it = lru_.begin();
    index_.emplace(it->hash, it);
    if (parent) ++parent->children;
    bytes_ += entry_bytes();
    c.push_back(it);
    parent = &*it;
  }
  touch(c);
}

void PromptCache::clear() {
  index_.clear();
  lru_.clear();
  bytes_ = 0;
}

}  // namespace qmm::llm
