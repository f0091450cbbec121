// The pack cache (docs/design.md §7 "Pack cache"): a model's packed weights (and its token
// embedding rows) written once to a file under <cache>/packs/, then memory-mapped read-only by
// later loads, which so skip the repack, read only page-cache pages, and share them with every
// other process serving the same model.
//
// A file holds one model under one configuration; its name hashes the GGUF's path, the
// --convert type and the GEMM each weight type gets, and its key (checked byte for byte)
// names qmm's version and build, the CPU and its features, the GGUF's size, modification
// time and a hash of its header (metadata and tensor infos). Writes are atomic (a temporary
// then a rename), so concurrent writers each leave a whole file and a reader never sees a
// part. The file is read as hostile input, like a GGUF: its magic, version, key, entry table
// checksum, every offset and size (inside the file, page-aligned, in order, the last one
// ending the file) and every entry's kernel and shape against what this load would pack are
// checked; anything else is a stale or foreign file, which the load ignores and rewrites.
//
// Layout (little-endian):
//   "QMMPACK1"  u32 version  u32 key_len  u64 n_entries  u64 checksum (FNV-1a of key + table)
//   key (key_len bytes, text)  n_entries × Entry (176 bytes)  padding, then each entry's bytes
//   at its offset (a multiple of 4096).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "matmul/matmul.h"

namespace qmm::llm {

struct PackEntry {
  enum Kind : uint32_t { weights = 0, raw = 1 };  // packed weights / bytes copied as they are (the embedding)
  Kind kind = weights;
  uint32_t type = 0;  // WeightType (weights) or ggml type (raw)
  uint64_t n = 0, k = 0, offset = 0, bytes = 0;
  std::string name;   // the GEMM that packed the weights ("" for raw bytes)
};

class PackFile {
 public:
  // The mapped file at `path` when its key is `key` and everything checks out; nullptr with
  // *why empty when there is no file, nullptr with *why ("truncated", ...) when it is unusable.
  static std::shared_ptr<const PackFile> open(const std::string& path, const std::string& key, std::string* why);
  ~PackFile();
  PackFile(const PackFile&) = delete;
  PackFile& operator=(const PackFile&) = delete;

  const std::vector<PackEntry>& entries() const { return entries_; }
  const uint8_t* data(const PackEntry& e) const { return base_ + e.offset; }
  size_t size() const { return size_; }

 private:
  PackFile() = default;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  std::vector<PackEntry> entries_;
};

// One thing to write: packed weights, or raw bytes.
struct PackItem {
  const PackedWeights* w = nullptr;
  const uint8_t* raw = nullptr;
  size_t raw_bytes = 0;
  uint32_t raw_type = 0;
};

// Writes `items` under `key` to `path` (atomically; the directory is created). Throws qmm::Error.
void write_pack_file(const std::string& path, const std::string& key, const std::vector<PackItem>& items);

// The key and file name of gguf `f` loaded with `convert_to` under `filter` on this CPU and build.
struct PackId {
  std::string key, file_name;
};
PackId pack_id(const gguf::File& f, const std::string& convert_to, const KernelFilter& filter);

// <tune_cache_dir()>/packs ("" when there is no cache directory).
std::string default_pack_dir();

uint64_t fnv1a(const void* p, size_t n, uint64_t h = 0xcbf29ce484222325ull);

}  // namespace qmm::llm
