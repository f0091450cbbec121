#include "kernels/ref/rhs_pack_nxk_kquants.h"

#include <cstring>

#include "kernels/ref/layouts_k.h"

namespace qmm {
namespace {

using layout::interleave_chunks;

// Packs each GGUF block B (of `elems` weights) of each row with pack_block(block, out, nr, r, kr),
// out pointing at the block's packed bytes in its panel (`bytes` per row and block); kr is the
// chunk size in bytes (4 or 8).
template <class B, size_t elems, size_t bytes, void (*pack_block)(const B&, uint8_t*, size_t, size_t, size_t)>
struct Packer {
  static size_t panel(size_t nr, size_t k) { return nr * (k / elems) * bytes; }
  static size_t size(size_t n, size_t k, size_t nr, size_t, size_t) { return (n + nr - 1) / nr * panel(nr, k); }
  static size_t offset(size_t n_idx, size_t k, size_t nr, size_t, size_t) { return n_idx / nr * panel(nr, k); }
  static void run(size_t n, size_t k, size_t nr, size_t kr, size_t, const void* rhs, void* rhs_packed) {
    const size_t blocks = k / elems;
    const auto* src = static_cast<const uint8_t*>(rhs);
    for (size_t row = 0; row < n; ++row) {
      uint8_t* p = static_cast<uint8_t*>(rhs_packed) + row / nr * panel(nr, k);
      for (size_t b = 0; b < blocks; ++b) {
        B blk;
        std::memcpy(&blk, src + (row * blocks + b) * sizeof(B), sizeof(B));
        pack_block(blk, p + b * nr * bytes, nr, row % nr, kr);
      }
    }
  }
};

// A super-block (block) scale, ±Inf stored as NaN (the NaN policy, kernels/ukernel.h).
void store_scale(uint8_t* out, uint16_t d) {
  const uint16_t v = fp16_scale_or_nan(d);
  std::memcpy(out, &v, 2);
}

// The 8 sub-block scales and mins as bytes at `out` (16·nr bytes), then d and dmin.
void pack_scale_min(const uint8_t scales[12], uint16_t d, uint16_t dmin, uint8_t* out, size_t nr, size_t r) {
  for (int j = 0; j < 8; ++j) kscale_min(scales, j, &out[2 * nr * j + r], &out[2 * nr * j + nr + r]);
  store_scale(out + 16 * nr + 2 * r, d);
  store_scale(out + 18 * nr + 2 * r, dmin);
}

void pack_q4k(const BlockQ4_K& b, uint8_t* out, size_t nr, size_t r, size_t kr) {
  interleave_chunks(b.qs, 128, nr, r, out, kr);
  pack_scale_min(b.scales, b.d, b.dmin, out + 128 * nr, nr, r);
}

void pack_q5k(const BlockQ5_K& b, uint8_t* out, size_t nr, size_t r, size_t kr) {
  interleave_chunks(b.qs, 128, nr, r, out, kr);
  interleave_chunks(b.qh, 32, nr, r, out + 128 * nr, kr);
  pack_scale_min(b.scales, b.d, b.dmin, out + 160 * nr, nr, r);
}

void pack_q6k(const BlockQ6_K& b, uint8_t* out, size_t nr, size_t r, size_t kr) {
  interleave_chunks(b.ql, 128, nr, r, out, kr);
  interleave_chunks(b.qh, 64, nr, r, out + 128 * nr, kr);
  for (size_t t = 0; t < 16; ++t) out[192 * nr + nr * t + r] = static_cast<uint8_t>(b.scales[t]);
  store_scale(out + 208 * nr + 2 * r, b.d);
}

void pack_iq4nl(const BlockIQ4_NL& b, uint8_t* out, size_t nr, size_t r, size_t kr) {
  interleave_chunks(b.qs, 16, nr, r, out, kr);
  store_scale(out + 16 * nr + 2 * r, b.d);
}

using Q4k = Packer<BlockQ4_K, kSuperBlock, layout::kQ4kpBytes, pack_q4k>;
using Q5k = Packer<BlockQ5_K, kSuperBlock, layout::kQ5kpBytes, pack_q5k>;
using Q6k = Packer<BlockQ6_K, kSuperBlock, layout::kQ6kpBytes, pack_q6k>;
using Iq4nl = Packer<BlockIQ4_NL, kBlock, layout::kIq4nlpBytes, pack_iq4nl>;

}  // namespace

const RhsPacker rhs_pack_nxk_q4kp_q4k = {"rhs_pack_nxk_q4kp_q4k", WeightType::q4_k, Q4k::size, Q4k::offset, Q4k::run};
const RhsPacker rhs_pack_nxk_q5kp_q5k = {"rhs_pack_nxk_q5kp_q5k", WeightType::q5_k, Q5k::size, Q5k::offset, Q5k::run};
const RhsPacker rhs_pack_nxk_q6kp_q6k = {"rhs_pack_nxk_q6kp_q6k", WeightType::q6_k, Q6k::size, Q6k::offset, Q6k::run};
const RhsPacker rhs_pack_nxk_iq4nlp_iq4nl = {"rhs_pack_nxk_iq4nlp_iq4nl", WeightType::iq4_nl, Iq4nl::size,
                                             Iq4nl::offset, Iq4nl::run};

}  // namespace qmm
