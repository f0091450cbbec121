// The prompt cache of `qmm serve --cache-ram` (llama-server's flag): the K/V of finished
// sequences kept in host RAM, so that a request sharing a prefix with any earlier request (a
// system prompt, a document, another user's conversation) starts from the longest cached
// prefix, copied into whichever slot serves it.
//
// A sequence is cut into blocks of block_tokens tokens; block i is keyed by the hash of (the
// hash of block i-1, its own tokens), so one lookup per block finds a prefix. A hash is never
// trusted alone: an entry keeps its tokens and its parent entry, and a block matches only when
// both are the ones of the prompt (a prefix that differs in any token never matches). Entries
// are evicted least recently used first, leaves before their parents, so that every cached
// block's prefix is cached too; the bytes held (K/V, tokens and bookkeeping) never exceed the
// budget. Works with every KV type; not with sliding-window rings (State::kv_copyable()).
// Not thread-safe: the generator's thread owns it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace qmm::llm {

class State;

class PromptCache {
 public:
  static constexpr size_t kBlockTokens = 64;
  // The key of a block: a hash of its parent's key and its tokens (tests give a worse one).
  using Hash = uint64_t (*)(uint64_t parent, const int32_t* tokens, size_t n);
  static uint64_t block_hash(uint64_t parent, const int32_t* tokens, size_t n);
  // budget: bytes the cache may hold; block_kv_bytes: K/V bytes of one block (State::kv_copy_bytes).
  PromptCache(size_t budget, size_t block_kv_bytes, size_t block_tokens = kBlockTokens, Hash hash = &block_hash);

  // The length of the longest cached prefix of `tokens` (whole blocks; no entry is touched).
  size_t match(std::span<const int32_t> tokens) const;
  // Makes `seq` of `s` hold the longest cached prefix of tokens[0, limit) when it is longer than
  // the `have` positions it already holds (the same tokens); returns the positions it holds.
  size_t restore(State& s, size_t seq, std::span<const int32_t> tokens, size_t have, size_t limit);
  // Keeps the whole blocks of `seq`'s cache (tokens: what its positions hold) not cached yet,
  // evicting the least recently used blocks to stay in the budget (or keeping fewer blocks).
  void store(const State& s, size_t seq, std::span<const int32_t> tokens);
  void clear();

  size_t bytes() const { return bytes_; }     // held, never above budget()
  size_t budget() const { return budget_; }
  size_t blocks() const { return lru_.size(); }
  size_t block_tokens() const { return block_tokens_; }
  size_t entry_bytes() const;                 // what one block costs

 private:
  struct Entry {
    uint64_t hash = 0;
    Entry* parent = nullptr;
    std::vector<int32_t> tokens;
    std::vector<uint8_t> kv;
    size_t children = 0;
  };
  using Iter = std::list<Entry>::iterator;
  // The chain of entries holding the longest cached prefix of tokens (root first).
  void chain(std::span<const int32_t> tokens, std::vector<Iter>& out) const;
  void touch(const std::vector<Iter>& chain);  // most recent, the root last (parents before children)
  bool evict_one(const std::vector<Iter>& pinned);

  Hash hash_;
  size_t budget_, block_kv_bytes_, block_tokens_;
  size_t bytes_ = 0;
  mutable std::list<Entry> lru_;  // most recently used first
  std::unordered_multimap<uint64_t, Iter> index_;
};

}  // namespace qmm::llm
