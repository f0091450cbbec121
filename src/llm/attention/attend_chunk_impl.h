// The body of the vectorised attention kernels (attend_generic, attend_avx2, attend_avx512): one
// template over an ISA policy that supplies the int8 Q·K of one block of 32, compiled in each
// variant's file with that file's flags. The policy P provides
//   P::Kb                       32 int8 key values in registers
//   P::load_q8(qs), load_q4(qs) a Q8_0 / Q4_0 block's values (Q4_0: nibble − 8)
//   P::dot(k, q, q_abs) -> v8   lane l = Σ_{i=4l..4l+3} q_i · k_i (exact), as floats
//   P::half(p) -> float         the F16 at p
//   P::load_rows(t, rows, stride, count, out, hd)   kv_load's rows as F32 (exact, any order)
//   P::scores<Q4, H>(...)       the int8 scores of a run of key rows: scores_int8<P, Q4, H> below,
//                               or the variant's own loop with the same arithmetic per lane
// The contract and the arithmetic are attend_kernel.h's.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/blocks.h"
#include "llm/attention/attend_kernel.h"
#include "llm/attention/vec8.h"
#include "llm/kv_type.h"

namespace qmm::llm {
namespace {

// From the scores of H heads (H = 0: one head, any hd) at att + h·kAttendChunk over len positions:
// the partials out + h·ps = m, l, o[hd] against the values vf (hd apart, as F32).
template <size_t H>
[[gnu::always_inline]] inline void chunk_partials(float* att, const float* vf, size_t hd, size_t len, float softcap, float* out,
                                                  size_t ps) {
  constexpr size_t heads = H ? H : 1;
  float ones[heads];
  for (size_t h = 0; h < heads; ++h) {
    float* a = att + h * kAttendChunk;
    if (softcap > 0) cap_scores(a, len, softcap);
    out[h * ps] = max_of(a, len);
    out[h * ps + 1] = exp_minus(a, len, out[h * ps]);
    ones[h] = 1.0f;
  }
  if constexpr (H > 0) {
    weighted_values<H>(att, kAttendChunk, vf, len, vf + len * hd, hd, hd, len, ones, out + 2, ps);
  } else {
    float* o = out + 2;
    std::fill(o, o + hd, 0.0f);
    for (size_t p = 0; p < len; ++p)
      for (size_t d = 0; d < hd; ++d) o[d] += att[p] * vf[p * hd + d];
  }
}

// att[h·kAttendChunk + p] = scale · q_h·k_p for H heads of int8 queries (qs, q_abs = |qs| at
// h·hd; scales qd at h·nb) against len Q8_0 / Q4_0 key rows (row p at k + p·stride). A pass
// takes 8/H keys: each key block is loaded once for the H heads, the 8 lane sums reduced together
// by hsum8; a key in the tail is reduced in hsum8's order, so its bits do not depend on where
// its group starts (a ring's wrap). The key rows a few passes ahead are prefetched: in a decode
// step they come from DRAM.
template <class P, bool Q4, size_t H>
[[gnu::always_inline]] inline void scores_int8(const int8_t* qs, const int8_t* q_abs, const float* qd, const uint8_t* k, size_t stride,
                                               size_t hd, size_t len, float scale, float* att) {
  constexpr size_t K = 8 / H, bytes = Q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  const size_t nb = hd / kBlock;
  auto key_block = [&](const uint8_t* row, size_t b, float* dk) {
    const uint8_t* blk = row + b * bytes;
    *dk = P::half(blk);
    if constexpr (Q4) {
      return P::load_q4(blk + 2);
    } else {
      return P::load_q8(blk + 2);
    }
  };
  size_t p = 0;
  for (; p + K <= len; p += K) {
    const uint8_t* kp = k + p * stride;
    for (size_t off = 0; off < K * stride; off += 64) __builtin_prefetch(kp + 4 * K * stride + off);
    v8 a[8] = {};
    for (size_t b = 0; b < nb; ++b) {
      for (size_t j = 0; j < K; ++j) {
        float dk;
        const auto kb = key_block(kp + j * stride, b, &dk);
        for (size_t h = 0; h < H; ++h) a[h * K + j] += P::dot(kb, qs + h * hd + b * kBlock, q_abs + h * hd + b * kBlock) * (dk * qd[h * nb + b]);
      }
    }
    const v8 sums = hsum8(a) * scale;
    for (size_t h = 0; h < H; ++h)
      for (size_t j = 0; j < K; ++j) att[h * kAttendChunk + p + j] = sums[h * K + j];
  }
  for (; p < len; ++p) {
    for (size_t h = 0; h < H; ++h) {
      v8 acc{};
      for (size_t b = 0; b < nb; ++b) {
        float dk;
        const auto kb = key_block(k + p * stride, b, &dk);
        acc += P::dot(kb, qs + h * hd + b * kBlock, q_abs + h * hd + b * kBlock) * (dk * qd[h * nb + b]);
      }
      att[h * kAttendChunk + p] = (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))) * scale;
    }
  }
}

// H heads of one row against the first len positions of the chunk: int8 keys straight from the
// cache (the pieces of a ring, `row0` the chunk's first cache row), or F32 keys kf.
template <class P, size_t H>
[[gnu::always_inline]] inline void chunk_heads(const float* q, const KvHead& kv, size_t row0, const float* kf, const float* vf,
                                               size_t hd, size_t len, float scale, float softcap, float* att, int8_t* qs,
                                               float* qd, float* out, size_t ps) {
  if constexpr (H > 0) {
    if (attend_int8_keys(kv.k_type)) {
      int8_t* q_abs = qs + H * hd;
      for (size_t h = 0; h < H; ++h) attend_quantize_query(q + h * hd, hd, qs + h * hd, qd + h * (hd / kBlock));
      for (size_t i = 0; i < H * hd; ++i) q_abs[i] = static_cast<int8_t>(qs[i] < 0 ? -qs[i] : qs[i]);
      for (size_t p = 0; p < len;) {
        const size_t row = (row0 + p) % kv.ring.slots, n = std::min(len - p, kv.ring.slots - row);
        const uint8_t* k = kv.k + row * kv.k_stride;
        if (kv.k_type == KvType::q4_0) {
          P::template scores<true, H>(qs, q_abs, qd, k, kv.k_stride, hd, n, scale, att + p);
        } else {
          P::template scores<false, H>(qs, q_abs, qd, k, kv.k_stride, hd, n, scale, att + p);
        }
        p += n;
      }
    } else {
      scores<H>(q, kf, nullptr, hd, hd, len, scale, att, kAttendChunk);
    }
  } else {
    for (size_t p = 0; p < len; ++p) att[p] = dot(q, kf + p * hd, hd) * scale;
  }
  chunk_partials<H>(att, vf, hd, len, softcap, out, ps);
}

template <class P>
[[gnu::always_inline]] inline void chunk_impl(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk,
                                              size_t pos0, size_t rows, float scale, float softcap, float* scratch, float* part) {
  const size_t c0 = chunk * kAttendChunk, end = pos0 + rows;  // end: the positions the last row attends to
  const size_t n = c0 < end ? std::min(kAttendChunk, end - c0) : 0;
  const bool int8_keys = attend_int8_keys(kv.k_type);
  float *kf = scratch, *vf = scratch + kAttendChunk * hd, *att = vf + kAttendChunk * hd;
  // The int8 queries live where F32 keys would: kAttendHeads heads' qs and |qs|, then their scales.
  int8_t* qs = reinterpret_cast<int8_t*>(kf);
  float* qd = kf + kAttendHeads * hd / 2;
  const size_t row0 = (kv.ring.start + c0) % kv.ring.slots;
  // The chunk's V rows (and F32 / F16 K rows) as F32, read once for every row and head (at most
  // two pieces of a ring).
  for (size_t p = 0; p < n;) {
    const size_t row = (row0 + p) % kv.ring.slots, len = std::min(n - p, kv.ring.slots - row);
    if (!int8_keys) P::load_rows(kv.k_type, kv.k + row * kv.k_stride, kv.k_stride, len, kf + p * hd, hd);
    P::load_rows(kv.v_type, kv.v + row * kv.v_stride, kv.v_stride, len, vf + p * hd, hd);
    p += len;
  }
  const size_t ps = attend_partial_size(hd);
  for (size_t r = 0; r < rows; ++r) {
    const size_t len = pos0 + r + 1 > c0 ? std::min(n, pos0 + r + 1 - c0) : 0;
    float* pr = part + r * heads * ps;
    if (len == 0) {
      for (size_t h = 0; h < heads; ++h) {
        pr[h * ps] = -INFINITY;
        std::fill(pr + h * ps + 1, pr + (h + 1) * ps, 0.0f);
      }
      continue;
    }
    for (size_t h = 0; h < heads;) {
      const float* qh = q + r * q_stride + h * hd;
      float* out = pr + h * ps;
      if (hd % 8 != 0) {
        chunk_heads<P, 0>(qh, kv, row0, kf, vf, hd, len, scale, softcap, att, qs, qd, out, ps);
        h += 1;
      } else if (heads - h >= kAttendHeads) {
        chunk_heads<P, kAttendHeads>(qh, kv, row0, kf, vf, hd, len, scale, softcap, att, qs, qd, out, ps);
        h += kAttendHeads;
      } else if (heads - h >= 2) {
        chunk_heads<P, 2>(qh, kv, row0, kf, vf, hd, len, scale, softcap, att, qs, qd, out, ps);
        h += 2;
      } else {
        chunk_heads<P, 1>(qh, kv, row0, kf, vf, hd, len, scale, softcap, att, qs, qd, out, ps);
        h += 1;
      }
    }
  }
}

}  // namespace
}  // namespace qmm::llm
