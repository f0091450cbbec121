#include "kernels/ref/rhs_pack_nxk_kquants.h"

#include <algorithm>
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
  static constexpr size_t kElems = elems, kBytes = bytes;
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

// The packers the kernels use write the same bytes as the plain ones above (their reference
// twins, compared byte for byte by tests/test_packers.cpp) 5-8x faster, which is most of a
// K-quant model's load time: the chunk size is a compile-time constant (a runtime-sized memcpy
// is a libc call per 4 bytes), the sub-block scales are decoded inline, and a panel is filled
// super-block by super-block, so the bytes written stay in L1 until every row has been placed.

// The kr-byte chunks of `bytes` quant bytes of row r (chunk_offset with kr constant).
template <size_t kr>
void chunks(const uint8_t* src, size_t bytes, size_t nr, size_t r, uint8_t* dst) {
  for (size_t c = 0; c < bytes; c += kr) std::memcpy(dst + c * nr + kr * r, src + c, kr);
}

template <size_t kr>
void fast_q4k(const BlockQ4_K& b, uint8_t* out, size_t nr, size_t r) {
  chunks<kr>(b.qs, 128, nr, r, out);
  pack_scale_min(b.scales, b.d, b.dmin, out + 128 * nr, nr, r);
}

template <size_t kr>
void fast_q5k(const BlockQ5_K& b, uint8_t* out, size_t nr, size_t r) {
  chunks<kr>(b.qs, 128, nr, r, out);
  chunks<kr>(b.qh, 32, nr, r, out + 128 * nr);
  pack_scale_min(b.scales, b.d, b.dmin, out + 160 * nr, nr, r);
}

template <size_t kr>
void fast_q6k(const BlockQ6_K& b, uint8_t* out, size_t nr, size_t r) {
  chunks<kr>(b.ql, 192, nr, r, out);  // ql and qh are adjacent in the block and in the panel
  for (size_t t = 0; t < 16; ++t) out[192 * nr + nr * t + r] = static_cast<uint8_t>(b.scales[t]);
  store_scale(out + 208 * nr + 2 * r, b.d);
}

template <size_t kr>
void fast_iq4nl(const BlockIQ4_NL& b, uint8_t* out, size_t nr, size_t r) {
  chunks<kr>(b.qs, 16, nr, r, out);
  store_scale(out + 16 * nr + 2 * r, b.d);
}

// Ref: the reference twin (sizes, offsets, and any kr but 4 and 8); Block<kr>: packs one GGUF
// block of row r into its packed block `out` of the panel.
template <class Ref, class B, void (*Block4)(const B&, uint8_t*, size_t, size_t),
          void (*Block8)(const B&, uint8_t*, size_t, size_t)>
struct FastPacker {
  static void run(size_t n, size_t k, size_t nr, size_t kr, size_t sr, const void* rhs, void* rhs_packed) {
    if (kr == 4) return run_kr<Block4>(n, k, nr, rhs, rhs_packed);
    if (kr == 8) return run_kr<Block8>(n, k, nr, rhs, rhs_packed);
    Ref::run(n, k, nr, kr, sr, rhs, rhs_packed);
  }
  template <void (*block)(const B&, uint8_t*, size_t, size_t)>
  static void run_kr(size_t n, size_t k, size_t nr, const void* rhs, void* rhs_packed) {
    const size_t blocks = k / Ref::kElems;
    const auto* src = static_cast<const uint8_t*>(rhs);
    for (size_t p0 = 0; p0 < n; p0 += nr) {
      uint8_t* panel = static_cast<uint8_t*>(rhs_packed) + p0 / nr * Ref::panel(nr, k);
      const size_t rows = std::min(nr, n - p0);
      for (size_t b = 0; b < blocks; ++b) {
        for (size_t r = 0; r < rows; ++r) {
          B blk;  // copied: the caller's rows need not be aligned for B's f16 fields
          std::memcpy(&blk, src + ((p0 + r) * blocks + b) * sizeof(B), sizeof(B));
          block(blk, panel + b * nr * Ref::kBytes, nr, r);
        }
      }
    }
  }
};

using FastQ4k = FastPacker<Q4k, BlockQ4_K, fast_q4k<4>, fast_q4k<8>>;
using FastQ5k = FastPacker<Q5k, BlockQ5_K, fast_q5k<4>, fast_q5k<8>>;
using FastQ6k = FastPacker<Q6k, BlockQ6_K, fast_q6k<4>, fast_q6k<8>>;
using FastIq4nl = FastPacker<Iq4nl, BlockIQ4_NL, fast_iq4nl<4>, fast_iq4nl<8>>;

const RhsPacker ref_q4k = {"rhs_pack_nxk_q4kp_q4k (reference)", WeightType::q4_k, Q4k::size, Q4k::offset, Q4k::run};
const RhsPacker ref_q5k = {"rhs_pack_nxk_q5kp_q5k (reference)", WeightType::q5_k, Q5k::size, Q5k::offset, Q5k::run};
const RhsPacker ref_q6k = {"rhs_pack_nxk_q6kp_q6k (reference)", WeightType::q6_k, Q6k::size, Q6k::offset, Q6k::run};
const RhsPacker ref_iq4nl = {"rhs_pack_nxk_iq4nlp_iq4nl (reference)", WeightType::iq4_nl, Iq4nl::size, Iq4nl::offset,
                             Iq4nl::run};

}  // namespace

const RhsPacker rhs_pack_nxk_q4kp_q4k = {"rhs_pack_nxk_q4kp_q4k", WeightType::q4_k, Q4k::size, Q4k::offset,
                                         FastQ4k::run, &ref_q4k};
const RhsPacker rhs_pack_nxk_q5kp_q5k = {"rhs_pack_nxk_q5kp_q5k", WeightType::q5_k, Q5k::size, Q5k::offset,
                                         FastQ5k::run, &ref_q5k};
const RhsPacker rhs_pack_nxk_q6kp_q6k = {"rhs_pack_nxk_q6kp_q6k", WeightType::q6_k, Q6k::size, Q6k::offset,
                                         FastQ6k::run, &ref_q6k};
const RhsPacker rhs_pack_nxk_iq4nlp_iq4nl = {"rhs_pack_nxk_iq4nlp_iq4nl", WeightType::iq4_nl, Iq4nl::size,
                                             Iq4nl::offset, FastIq4nl::run, &ref_iq4nl};

}  // namespace qmm
