// The body of the vectorised attention kernels (attend_generic, attend_avx2, attend_avx512): one
// template over an ISA policy that supplies the int8 Q·K of one block of 32, compiled in each
// variant's file with that file's flags. The policy P provides
//   P::Kb                       32 int8 key values in registers
//   P::load_q8(qs), load_q4(qs) a Q8_0 / Q4_0 block's values (Q4_0: nibble − 8)
//   P::dot_i(k, q, q_abs) -> v8i lane l = Σ_{i=4l..4l+3} q_i · k_i (exact, int32)
//   P::store_block(d, k, out)   out[0..32) = d · k_i (exact): a Q8_0 / Q4_0 block staged as F32
//   P::kF16Direct, P::load8_f16(p) -> v8   whether F16 rows are read in place, eight converted
//   P::kQ8ValuesDirect, P::accumulate_q8<H>(...)   whether Q8_0 values are read in place (the sums
//                               of accumulate_values over the rows as kv_load gives them)
//   P::scores_rows<H>(...), P::accumulate_values<H>(...)   the F32/F16 scores and value sums:
//                               scores_rows_v8 / accumulate_values_v8 below (VectorLoops), or the
//                               variant's own loops with one arithmetic for every key and position
//   P::quantize_query(q, hd, qs, d)   attend_quantize_query's bytes (VectorLoops: that function)
//   P::numerators(a, len, out)  the softmax numerators of a row's scores: out[0] = m = max a,
//                               a[p] = e^(a[p] − m), out[1] = Σ a[p] (VectorLoops: vec8's loops)
//   P::scores<Q4, H>(...)       the int8 scores of a run of key rows: scores_int8<P, Q4, H> below
//                               (VectorLoops), or the variant's own loop with the same arithmetic per lane
//   P::kPanel, P::panel_fits(t, hd), P::panel_floats(t, hd), P::panel_block(...),
//   P::panel_scores<H>(...), P::panel_scores_int8<H>(...)   whether a tile of query rows scores
//                               keys of type t from a key-major panel (a GEMM-like micro-tile,
//                               no horizontal sum per score) with the bits scores_rows / scores
//                               give a lone row (see use_panel below)
// The contract and the arithmetic are attend_kernel.h's.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/blocks.h"
#include "core/fp16.h"
#include "llm/attention/attend_kernel.h"
#include "llm/attention/vec8.h"
#include "llm/kv_type.h"
#if defined(__F16C__) || defined(__FMA__)
#include <immintrin.h>
#endif

namespace qmm::llm {
namespace {

// The F16 at p (a block's scale) as a float: fp16.h's conversion, or F16C's one instruction where
// the variant's flags have it (the same value).
[[gnu::always_inline]] inline float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return fp16_to_fp32(h);
#endif
}

// The lanes of x summed in hsum8's order: a key scored alone gets the bits of a key in a group.
[[gnu::always_inline]] inline float hsum8_order(v8 x) { return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7])); }

// The frame of every per-key score loop: att[h·kAttendChunk + p] = scale · (key p's sum for head
// h) for H heads and len key rows of row_bytes. A pass takes K = 8/H keys: group(p) -> v8 gives
// the pass's sums, lane h·K + j for key p + j; a key in the tail gets tail(p, h) -> float, with
// the bits a group gives it, so its score does not depend on where its group starts (a ring's
// wrap). Three heads take K = 2 keys a pass (lanes 6 and 7 unused). The key rows a few passes
// ahead (at least kKeyAhead bytes) are prefetched: in a decode step they come from DRAM, in
// chunks that cross 4 KiB pages where the hardware's stream prefetch stops.
constexpr size_t kKeyAhead = 2048;
template <size_t H, class Group, class Tail>
[[gnu::always_inline]] inline void score_frame(const void* k, size_t row_bytes, size_t len, float scale, float* att, Group&& group,
                                               Tail&& tail) {
  constexpr size_t K = 8 / H;
  size_t p = 0;
  for (; p + K <= len; p += K) {
    const uint8_t* kp = static_cast<const uint8_t*>(k) + p * row_bytes;
    const size_t ahead = std::max(4 * K * row_bytes, kKeyAhead);
    for (size_t off = 0; off < K * row_bytes; off += 64) __builtin_prefetch(kp + ahead + off);
    const v8 sums = group(p) * scale;
    for (size_t h = 0; h < H; ++h)
      for (size_t j = 0; j < K; ++j) att[h * kAttendChunk + p + j] = sums[h * K + j];
  }
  for (; p < len; ++p)
    for (size_t h = 0; h < H; ++h) att[h * kAttendChunk + p] = tail(p, h) * scale;
}

// One term of an int8 score, in the reference's arithmetic (attend_ref): the block's exact int32
// sum times d_k·d_q, fused-multiply-added to the sum of the blocks before it (from 0, in block
// order). An explicit FMA: a compiler may contract a product and a sum, or not, so a rounded
// product is not the same bits from one build or ISA to the next; a fused one is.
[[gnu::always_inline]] inline float int8_term(float s, float dk, float dq, int32_t sum) { return std::fma(dk * dq, static_cast<float>(sum), s); }
// int8_term for eight lanes: a·b + c rounded once.
[[gnu::always_inline]] inline v8 fma8(v8 a, v8 b, v8 c) {
#if defined(__FMA__)
  return std::bit_cast<v8>(_mm256_fmadd_ps(std::bit_cast<__m256>(a), std::bit_cast<__m256>(b), std::bit_cast<__m256>(c)));
#else
  for (int i = 0; i < 8; ++i) c[i] = std::fma(a[i], b[i], c[i]);
  return c;
#endif
}

// att[h·kAttendChunk + p] = scale · q_h·k_p for H heads of int8 queries (qs, q_abs = |qs| at
// h·hd; scales qd at h·nb) against len Q8_0 / Q4_0 key rows (row p at k + p·stride), in
// score_frame: each key block is loaded once for the H heads, its lane sums (P::dot_i) reduced
// exactly in int32 by hsum8 for the pass's eight (head, key) pairs, then scaled and added as
// int8_term does: the reference's bits in every lane and in the tail.
template <class P, bool Q4, size_t H>
[[gnu::always_inline]] inline void scores_int8(const int8_t* qs, const int8_t* q_abs, const float* qd, const uint8_t* k, size_t stride,
                                               size_t hd, size_t len, float scale, float* att) {
  constexpr size_t K = 8 / H, bytes = Q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  const size_t nb = hd / kBlock;
  auto key_block = [&](const uint8_t* row, size_t b, float* dk) {
    const uint8_t* blk = row + b * bytes;
    *dk = half_at(blk);
    if constexpr (Q4) {
      return P::load_q4(blk + 2);
    } else {
      return P::load_q8(blk + 2);
    }
  };
  auto lanes = [&](const typename P::Kb& kb, size_t h, size_t b) {
    return P::dot_i(kb, qs + h * hd + b * kBlock, q_abs + h * hd + b * kBlock);
  };
  score_frame<H>(
      k, stride, len, scale, att,
      [&](size_t p) {
        v8 s{};
        for (size_t b = 0; b < nb; ++b) {
          v8i a[8] = {};
          v8 dd{};  // d_k·d_q per lane
          for (size_t j = 0; j < K; ++j) {
            float dk;
            const auto kb = key_block(k + (p + j) * stride, b, &dk);
            for (size_t h = 0; h < H; ++h) {
              a[h * K + j] = lanes(kb, h, b);
              dd[h * K + j] = dk * qd[h * nb + b];
            }
          }
          s = fma8(__builtin_convertvector(hsum8(a), v8), dd, s);
        }
        return s;
      },
      [&](size_t p, size_t h) {
        float s = 0;
        for (size_t b = 0; b < nb; ++b) {
          float dk;
          const v8i x = lanes(key_block(k + p * stride, b, &dk), h, b);
          s = int8_term(s, dk, qd[h * nb + b], ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7])));
        }
        return s;
      });
}

// Eight values of a cache row as floats: F32, or F16 converted in registers by the policy.
template <class P>
[[gnu::always_inline]] inline v8 load_elems(const float* p) {
  return load8(p);
}
template <class P>
[[gnu::always_inline]] inline v8 load_elems(const uint16_t* p) {
  return P::load8_f16(p);
}

// att[h·kAttendChunk + p] = scale · q_h·k_p for H heads (q_h at q + h·hd) against len key rows
// of F32 or F16 (row p at k + p·stride elements), hd % 8 == 0, in score_frame: the rows read
// through load_elems (the same bits as F32 rows holding the same values), each K vector loaded
// once for the H heads.
template <class P, size_t H, class T>
[[gnu::always_inline]] inline void scores_rows_v8(const float* q, const T* k, size_t stride, size_t hd, size_t len, float scale, float* att) {
  constexpr size_t K = 8 / H;
  score_frame<H>(
      k, stride * sizeof(T), len, scale, att,
      [&](size_t p) {
        v8 a[8] = {};
        for (size_t d = 0; d < hd; d += 8) {
          v8 kv[K];
          for (size_t j = 0; j < K; ++j) kv[j] = load_elems<P>(k + (p + j) * stride + d);
          for (size_t h = 0; h < H; ++h) {
            const v8 qv = load8(q + h * hd + d);
            for (size_t j = 0; j < K; ++j) a[h * K + j] += qv * kv[j];
          }
        }
        return hsum8(a);
      },
      [&](size_t p, size_t h) {
        v8 acc{};
        for (size_t d = 0; d < hd; d += 8) acc += load8(q + h * hd + d) * load_elems<P>(k + p * stride + d);
        return hsum8_order(acc);
      });
}

// count rows of type t (stride bytes apart) as F32 rows of hd: Q8_0 / Q4_0 a block at a time by
// the policy's registers (d · q, exact), the others by kv_load (the same floats either way).
template <class P>
inline void stage_rows(KvType t, const uint8_t* rows, size_t stride, size_t count, float* out, size_t hd) {
  if (!attend_int8_keys(t)) {
    kv_load(t, rows, stride, count, out, hd);
    return;
  }
  const size_t bytes = t == KvType::q4_0 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  for (size_t r = 0; r < count; ++r, rows += stride) {
    for (size_t b = 0; b < hd / kBlock; ++b, out += kBlock) {
      const uint8_t* blk = rows + b * bytes;
      P::store_block(half_at(blk), t == KvType::q4_0 ? P::load_q4(blk + 2) : P::load_q8(blk + 2), out);
    }
  }
}

// o_h[0..hd) += Σ_{p<len} att[h·kAttendChunk + p] · v_p for H heads (o_h at out + h·ps, v_p at
// v + p·stride elements, F32 or F16): weighted_values' passes of 64/H columns (each V vector
// loaded once for the H heads), continued from the sums already in out, so a run of positions
// split into tiles or ring pieces gets the bits of one loop over them.
template <class P, size_t H, class T>
[[gnu::always_inline]] inline void accumulate_values_v8(const float* att, const T* v, size_t stride, size_t hd, size_t len, float* out,
                                                        size_t ps) {
  constexpr size_t W = 8 / H;
  for (size_t d0 = 0; d0 < hd; d0 += 8 * W) {
    auto pass = [&](auto w) __attribute__((always_inline)) {
      v8 o[H][W] = {};
      for (size_t h = 0; h < H; ++h)
        for (size_t j = 0; j < w; ++j) o[h][j] = load8(out + h * ps + d0 + 8 * j);
      for (size_t p = 0; p < len; ++p) {
        const T* vp = v + p * stride + d0;
        v8 vv[W];
        for (size_t j = 0; j < w; ++j) vv[j] = load_elems<P>(vp + 8 * j);
        for (size_t h = 0; h < H; ++h) {
          const float ah = att[h * kAttendChunk + p];
          for (size_t j = 0; j < w; ++j) o[h][j] += ah * vv[j];
        }
      }
      for (size_t h = 0; h < H; ++h)
        for (size_t j = 0; j < w; ++j) store8(out + h * ps + d0 + 8 * j, o[h][j]);
    };
    if (hd - d0 >= 8 * W) {
      pass(std::integral_constant<size_t, W>{});
    } else {
      pass((hd - d0) / 8);
    }
  }
}

// The loops a policy takes from this header unless it brings its own: P derives from
// VectorLoops<P> and hides what it replaces (the eight-lane score and value loops, the int8
// scores, no panel).
template <class P>
struct VectorLoops {
  static constexpr bool kPanel = false;
  template <bool Q4, size_t H>
  static void scores(const int8_t* qs, const int8_t* q_abs, const float* qd, const uint8_t* k, size_t stride, size_t hd, size_t len,
                     float scale, float* att) {
    scores_int8<P, Q4, H>(qs, q_abs, qd, k, stride, hd, len, scale, att);
  }
  template <size_t H, class T>
  static void scores_rows(const float* q, const T* k, size_t stride, size_t hd, size_t len, float scale, float* att) {
    scores_rows_v8<P, H>(q, k, stride, hd, len, scale, att);
  }
  template <size_t H, class T>
  static void accumulate_values(const float* att, const T* v, size_t stride, size_t hd, size_t len, float* out, size_t ps) {
    accumulate_values_v8<P, H>(att, v, stride, hd, len, out, ps);
  }
  static void numerators(float* a, size_t len, float* out) {
    out[0] = max_of(a, len);
    out[1] = exp_minus(a, len, out[0]);
  }
  static void quantize_query(const float* q, size_t hd, int8_t* qs, float* d) { attend_quantize_query(q, hd, qs, d); }
};

// fn(p, row, len) for the pieces of chunk positions [a, b) in a ring of `slots` rows whose
// chunk starts at row0.
template <class F>
[[gnu::always_inline]] inline void for_pieces(size_t row0, size_t slots, size_t a, size_t b, F&& fn) {
  for (size_t p = a; p < b;) {
    const size_t row = (row0 + p) % slots, len = std::min(b - p, slots - row);
    fn(p, row, len);
    p += len;
  }
}

// How a variant reads a chunk's rows: straight from the cache (F32; F16 where the policy
// converts in registers; int8 keys) or staged as F32 in the scratch first.
template <class P>
[[gnu::always_inline]] inline bool read_direct(KvType t, size_t hd) {
  return hd % 8 == 0 && (t == KvType::f32 || (t == KvType::f16 && P::kF16Direct));
}
// The same for the values of a call for `rows` rows: Q8_0 ones too for a lone row, where the
// policy converts them in registers (for a tile of rows, converting each row once into the scratch
// is cheaper; both give the same floats, so the same bits).
template <class P>
[[gnu::always_inline]] inline bool read_values_direct(KvType t, size_t hd, size_t rows) {
  return read_direct<P>(t, hd) || (t == KvType::q8_0 && P::kQ8ValuesDirect && rows == 1);
}

// Whether a call for `rows` rows of `heads` heads scores its keys from a key-major panel
// (P::kPanel): the chunk's keys transposed once (build_panel), then every (row, head) scores 16
// keys a vector, with the lane sums scores_rows / scores give a lone row: the same bits, so a
// row's scores do not depend on whether it came alone (decode) or in a tile (prefill). Worth it
// from a tile of 8 queries (the transposition costs about what eight rows' horizontal sums do).
template <class P>
[[gnu::always_inline]] inline bool use_panel(KvType t, size_t hd, size_t rows, size_t heads) {
  if constexpr (P::kPanel) {
    return rows > 1 && rows * heads >= 8 && P::panel_fits(t, hd);
  } else {
    return false;
  }
}
// The chunk's n keys (chunk position p in ring row (row0 + p) % slots) as P's panel: blocks of
// 16 keys, the one of key b at panel + b / 16 · P::panel_floats (a last, partial block padded
// with zero keys).
template <class P>
inline void build_panel(const KvHead& kv, size_t row0, size_t n, size_t hd, float* panel) {
  for (size_t b = 0; b < n; b += 16) {
    const uint8_t* rows[16];
    const size_t count = std::min<size_t>(16, n - b);
    for (size_t j = 0; j < count; ++j) rows[j] = kv.k + (row0 + b + j) % kv.ring.slots * kv.k_stride;
    P::panel_block(kv.k_type, rows, count, hd, panel + b / 16 * P::panel_floats(kv.k_type, hd));
  }
}

// The chunk's work for H query heads (hd % 8 == 0) of the rows [r0, r0 + nr), tiled: the scores
// of every row against kTileKeys keys (16 from the panel unless it is null), then the next keys
// (the tile of K rows stays in L1 while the rows pass over it), the softmax numerators per row,
// then the values likewise. Each row's arithmetic is the one of a lone row (the same loops, only
// interleaved; the panel's with the same bits), so a row's bits do not depend on its neighbours. Partial (r, h) at part + (r·heads + h)·ps.
constexpr size_t kTileKeys = 32;

template <class P, size_t H>
[[gnu::always_inline]] inline void tile_heads(const float* q, size_t q_stride, size_t heads, size_t h0, const KvHead& kv, size_t row0,
                                              const float* kf, const float* vf, size_t hd, size_t c0, size_t n, size_t pos0, size_t r0,
                                              size_t nr, size_t rows, const float* panel, float scale, float softcap, float* att,
                                              int8_t* qs, float* qd, int32_t* qstart, float* part) {
  const size_t ps = attend_partial_size(hd), nb = hd / kBlock;
  auto len_of = [&](size_t r) { return std::min(n, pos0 + r + 1 - c0); };  // rows here see the chunk's first position
  auto att_of = [&](size_t r) { return att + (r - r0) * H * kAttendChunk; };
  auto q_of = [&](size_t r) { return q + r * q_stride + h0 * hd; };
  auto out_of = [&](size_t r) { return part + (r * heads + h0) * ps; };
  const bool int8_keys = attend_int8_keys(kv.k_type), direct_k = read_direct<P>(kv.k_type, hd), direct_v = read_values_direct<P>(kv.v_type, hd, rows);
  int8_t* q_abs = qs + kAttendRows * H * hd;
  if (int8_keys) {
    for (size_t r = r0; r < r0 + nr; ++r) {
      int8_t* qr = qs + (r - r0) * H * hd;
      for (size_t h = 0; h < H; ++h) P::quantize_query(q_of(r) + h * hd, hd, qr + h * hd, qd + ((r - r0) * H + h) * nb);
    }
    for (size_t i = 0; i < nr * H * hd; ++i) q_abs[i] = static_cast<int8_t>(qs[i] < 0 ? -qs[i] : qs[i]);
    // For the panel: −o·Σ of each block's 32 query values, o the key bytes' offset (panel_scores_int8).
    const int32_t o = kv.k_type == KvType::q4_0 ? 8 : 128;
    for (size_t i = 0; panel && i < nr * H * nb; ++i) {
      int32_t sum = 0;
      for (size_t j = 0; j < kBlock; ++j) sum += qs[i * kBlock + j];
      qstart[i] = -o * sum;
    }
  }
  // Scores, a tile of keys at a time (a lone row takes the chunk as one tile).
  const size_t tile = nr == 1 ? kAttendChunk : kTileKeys;
  if constexpr (P::kPanel) {
    if (panel) {  // the scores of a block of 16 keys past a row's last position are left unread
      for (size_t b = 0; b < n; b += 16) {
        const float* pb = panel + b / 16 * P::panel_floats(kv.k_type, hd);
        for (size_t r = r0; r < r0 + nr; ++r) {
          if (len_of(r) <= b) continue;
          const size_t i = (r - r0) * H;
          if (int8_keys) {
            P::template panel_scores_int8<H>(qs + i * hd, qd + i * nb, qstart + i * nb, pb, hd, scale, att_of(r) + b);
          } else {
            P::template panel_scores<H>(q_of(r), pb, hd, scale, att_of(r) + b);
          }
        }
      }
    }
  }
  for (size_t k0 = 0; !panel && k0 < n; k0 += tile) {
    for (size_t r = r0; r < r0 + nr; ++r) {
      const size_t end = std::min(len_of(r), k0 + tile);
      if (end <= k0) continue;
      if (int8_keys) {
        const size_t i = (r - r0) * H;
        for_pieces(row0, kv.ring.slots, k0, end, [&](size_t p, size_t row, size_t len) {
          const uint8_t* k = kv.k + row * kv.k_stride;
          if (kv.k_type == KvType::q4_0) {
            P::template scores<true, H>(qs + i * hd, q_abs + i * hd, qd + i * nb, k, kv.k_stride, hd, len, scale, att_of(r) + p);
          } else {
            P::template scores<false, H>(qs + i * hd, q_abs + i * hd, qd + i * nb, k, kv.k_stride, hd, len, scale, att_of(r) + p);
          }
        });
      } else if (direct_k) {
        for_pieces(row0, kv.ring.slots, k0, end, [&](size_t p, size_t row, size_t len) {
          const uint8_t* k = kv.k + row * kv.k_stride;
          if (kv.k_type == KvType::f16) {
            P::template scores_rows<H>(q_of(r), reinterpret_cast<const uint16_t*>(k), kv.k_stride / 2, hd, len, scale, att_of(r) + p);
          } else {
            P::template scores_rows<H>(q_of(r), reinterpret_cast<const float*>(k), kv.k_stride / 4, hd, len, scale, att_of(r) + p);
          }
        });
      } else {
        P::template scores_rows<H>(q_of(r), kf + k0 * hd, hd, hd, end - k0, scale, att_of(r) + k0);
      }
    }
  }
  // Softmax numerators: m = max, l = Σ e^(s − m); o starts at 0.
  for (size_t r = r0; r < r0 + nr; ++r) {
    for (size_t h = 0; h < H; ++h) {
      float* a = att_of(r) + h * kAttendChunk;
      float* out = out_of(r) + h * ps;
      if (softcap > 0) cap_scores(a, len_of(r), softcap);
      P::numerators(a, len_of(r), out);
      std::fill(out + 2, out + ps, 0.0f);
    }
  }
  // o = Σ e^(s − m) · v, a tile of values at a time.
  for (size_t k0 = 0; k0 < n; k0 += tile) {
    for (size_t r = r0; r < r0 + nr; ++r) {
      const size_t end = std::min(len_of(r), k0 + tile);
      if (end <= k0) continue;
      if (!direct_v) {
        P::template accumulate_values<H>(att_of(r) + k0, vf + k0 * hd, hd, hd, end - k0, out_of(r) + 2, ps);
        continue;
      }
      for_pieces(row0, kv.ring.slots, k0, end, [&](size_t p, size_t row, size_t len) {
        const uint8_t* v = kv.v + row * kv.v_stride;
        if constexpr (P::kQ8ValuesDirect) {
          if (kv.v_type == KvType::q8_0) {
            P::template accumulate_q8<H>(att_of(r) + p, v, kv.v_stride, hd, len, out_of(r) + 2, ps);
            return;
          }
        }
        if (kv.v_type == KvType::f16) {
          P::template accumulate_values<H>(att_of(r) + p, reinterpret_cast<const uint16_t*>(v), kv.v_stride / 2, hd, len, out_of(r) + 2, ps);
        } else {
          P::template accumulate_values<H>(att_of(r) + p, reinterpret_cast<const float*>(v), kv.v_stride / 4, hd, len, out_of(r) + 2, ps);
        }
      });
    }
  }
}

// One head of any head_dim (hd % 8 != 0; F32 / F16 keys only), one row at a time.
[[gnu::always_inline]] inline void plain_head(const float* q, const float* kf, const float* vf, size_t hd, size_t len, float scale,
                                              float softcap, float* att, float* out) {
  for (size_t p = 0; p < len; ++p) att[p] = dot(q, kf + p * hd, hd) * scale;
  if (softcap > 0) cap_scores(att, len, softcap);
  out[0] = max_of(att, len);
  out[1] = exp_minus(att, len, out[0]);
  float* o = out + 2;
  std::fill(o, o + hd, 0.0f);
  for (size_t p = 0; p < len; ++p)
    for (size_t d = 0; d < hd; ++d) o[d] += att[p] * vf[p * hd + d];
}

template <class P>
[[gnu::always_inline]] inline void chunk_impl(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk,
                                              size_t pos0, size_t rows, float scale, float softcap, float* scratch, float* part) {
  const FlushSubnormals flush;  // attend_kernel.h: no subnormal sums (microcode assists)
  const size_t c0 = chunk * kAttendChunk, end = pos0 + rows;  // end: the positions the last row attends to
  const size_t n = c0 < end ? std::min(kAttendChunk, end - c0) : 0;
  const bool int8_keys = attend_int8_keys(kv.k_type);
  float *kf = scratch, *vf = scratch + kAttendChunk * hd, *att = vf + kAttendChunk * hd;
  // The int8 queries live where F32 keys would: kAttendRows × kAttendHeads heads' qs and |qs|,
  // then their scales, then (for the panel) −o·Σ of each block of 32.
  int8_t* qs = reinterpret_cast<int8_t*>(kf);
  float* qd = kf + kAttendRows * kAttendHeads * hd / 2;
  int32_t* qstart = reinterpret_cast<int32_t*>(qd + kAttendRows * kAttendHeads * hd / kBlock);
  const size_t row0 = (kv.ring.start + c0) % kv.ring.slots;
  // The chunk's rows the variant does not read in place, as F32, read once for every row and head
  // (at most two pieces of a ring).
  for (size_t p = 0; p < n;) {
    const size_t row = (row0 + p) % kv.ring.slots, len = std::min(n - p, kv.ring.slots - row);
    if (!int8_keys && !read_direct<P>(kv.k_type, hd)) kv_load(kv.k_type, kv.k + row * kv.k_stride, kv.k_stride, len, kf + p * hd, hd);
    if (!read_values_direct<P>(kv.v_type, hd, rows)) stage_rows<P>(kv.v_type, kv.v + row * kv.v_stride, kv.v_stride, len, vf + p * hd, hd);
    p += len;
  }
  // Or the keys as a panel: in kf for F32 / F16 (panel keys are read_direct: kf is free), after
  // the int8 queries for Q8_0 / Q4_0.
  float* panel = n > 0 && use_panel<P>(kv.k_type, hd, rows, heads) ? (int8_keys ? qd + kAttendRows * kAttendHeads * hd / 32 * 9 : kf) : nullptr;
  if constexpr (P::kPanel) {
    if (panel) build_panel<P>(kv, row0, n, hd, panel);
  }
  const size_t ps = attend_partial_size(hd);
  // Rows that see none of the chunk (they come first: row r sees positions up to pos0 + r).
  size_t first = 0;
  for (; first < rows && pos0 + first + 1 <= c0; ++first) {
    for (size_t h = 0; h < heads; ++h) {
      float* pr = part + (first * heads + h) * ps;
      pr[0] = -INFINITY;
      std::fill(pr + 1, pr + ps, 0.0f);
    }
  }
  for (size_t r0 = first; r0 < rows; r0 += kAttendRows) {
    const size_t nr = std::min(kAttendRows, rows - r0);
    for (size_t h = 0; h < heads;) {
      if (hd % 8 != 0) {
        for (size_t r = r0; r < r0 + nr; ++r)
          plain_head(q + r * q_stride + h * hd, kf, vf, hd, std::min(n, pos0 + r + 1 - c0), scale, softcap, att, part + (r * heads + h) * ps);
        h += 1;
      } else if (heads - h >= kAttendHeads) {
        tile_heads<P, kAttendHeads>(q, q_stride, heads, h, kv, row0, kf, vf, hd, c0, n, pos0, r0, nr, rows, panel, scale, softcap, att, qs, qd, qstart, part);
        h += kAttendHeads;
      } else if (heads - h == 3) {  // a GQA group of 3 (Llama 3.2 3B) meets each K/V row once, not as 2 + 1
        tile_heads<P, 3>(q, q_stride, heads, h, kv, row0, kf, vf, hd, c0, n, pos0, r0, nr, rows, panel, scale, softcap, att, qs, qd, qstart, part);
        h += 3;
      } else if (heads - h >= 2) {
        tile_heads<P, 2>(q, q_stride, heads, h, kv, row0, kf, vf, hd, c0, n, pos0, r0, nr, rows, panel, scale, softcap, att, qs, qd, qstart, part);
        h += 2;
      } else {
        tile_heads<P, 1>(q, q_stride, heads, h, kv, row0, kf, vf, hd, c0, n, pos0, r0, nr, rows, panel, scale, softcap, att, qs, qd, qstart, part);
        h += 1;
      }
    }
  }
}

}  // namespace
}  // namespace qmm::llm
