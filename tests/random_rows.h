// Random GGUF weight rows for tests, fast under an emulator: the blocks of a block type are
// drawn from a pool the type's quantizer made once. The K-quant and IQ4_NL quantizers search
// their scales (tens of thousands of float operations a super-block, each a softfloat call
// under qemu); quantizing every test's weights afresh was most of the Arm stage's time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/blocks.h"
#include "core/random.h"

namespace qmm::test {

// kPoolBlocks blocks of `type` quantized from floats uniform in [-scale, scale), and those floats.
struct BlockPool {
  static constexpr size_t kPoolBlocks = 64;
  std::vector<float> f32;
  std::vector<uint8_t> blocks;
};

inline const BlockPool& block_pool(WeightType type, float scale) {
  static std::mutex mu;
  static std::map<std::pair<WeightType, float>, BlockPool> pools;  // node-based: references stay valid
  const std::lock_guard lock(mu);
  auto [it, fresh] = pools.try_emplace({type, scale});
  if (fresh) {
    const size_t k = BlockPool::kPoolBlocks * block_len(type);
    BlockPool& p = it->second;
    p.f32 = scale == 0.0f ? std::vector<float>(k, 0.0f) : random_floats(k, 0x5eedu + block_len(type), -scale, scale);
    p.blocks.resize(row_bytes(type, k));
    quantize_rows(type, p.f32.data(), p.blocks.data(), 1, k);
  }
  return it->second;
}

// GGUF rows [n, k] of `type`; row i from floats uniform in [-scale_of_row(i), scale_of_row(i)).
// Block types: each block drawn from block_pool by a hash of (seed, row, block); other types
// (floats, per-channel rows: cheap to quantize) quantized from their own random floats. `f32`
// (optional) gets the floats the rows were quantized from.
template <class ScaleOfRow>
std::vector<uint8_t> random_rows(WeightType type, size_t n, size_t k, uint64_t seed, ScaleOfRow scale_of_row,
                                 std::vector<float>* f32 = nullptr) {
  std::vector<uint8_t> rows(row_bytes(type, k) * n);
  if (!is_block_type(type)) {
    std::vector<float> w = random_floats(n * k, seed);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < k; ++j) w[i * k + j] *= scale_of_row(i);
    }
    quantize_rows(type, w.data(), rows.data(), n, k);
    if (f32) *f32 = std::move(w);
    return rows;
  }
  const size_t bl = block_len(type), bb = row_bytes(type, bl), nb = k / bl;
  if (f32) f32->resize(n * k);
  for (size_t i = 0; i < n; ++i) {
    const BlockPool& pool = block_pool(type, scale_of_row(i));
    for (size_t b = 0; b < nb; ++b) {
      uint64_t h = seed * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull + b * 0x94d049bb133111ebull;
      h ^= h >> 31;
      h *= 0xd6e8feb86659fd39ull;
      const size_t pick = (h >> 32) % BlockPool::kPoolBlocks;
      std::memcpy(&rows[i * nb * bb + b * bb], &pool.blocks[pick * bb], bb);
      if (f32) std::memcpy(&(*f32)[i * k + b * bl], &pool.f32[pick * bl], bl * sizeof(float));
    }
  }
  return rows;
}

}  // namespace qmm::test
