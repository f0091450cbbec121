#include "llm/attention/attend_avx512.h"

#include <immintrin.h>

#include "llm/attention/attend_chunk_impl.h"
#include "llm/attention/attend_x86.h"

namespace qmm::llm {
namespace {

struct Avx512Vnni : X86Keys {
  // |q| (unsigned) · (k with q's sign), four products summed per int32 lane: one vpdpbusd.
  static v8i dot_i(Kb k, const int8_t* q, const int8_t* q_abs) {
    const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q_abs));
    return std::bit_cast<v8i>(_mm256_dpbusd_epi32(_mm256_setzero_si256(), qa, _mm256_sign_epi8(k, qv)));
  }
  // A Q8_0 / Q4_0 block staged as F32 (d · q, exact) sixteen values a conversion.
  static void store_block(float d, Kb q, float* out) {
    const __m512 dv = _mm512_set1_ps(d);
    _mm512_storeu_ps(out, _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(q)))));
    _mm512_storeu_ps(out + 16, _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(q, 1)))));
  }

  // F32 / F16 scores and value sums sixteen columns a vector (head_dim % 16 == 0; others take the
  // eight-column loops). A key's 16 lane sums are folded to 8 (lane i + lane i + 8), then reduced
  // in hsum8's order, whether the key was scored in a group or alone (score_frame).
  static __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 load16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static v8 fold(__m512 x) {
    return std::bit_cast<v8>(_mm256_add_ps(_mm512_castps512_ps256(x), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1))));
  }
  template <size_t H, class T>
  static void scores_rows(const float* q, const T* k, size_t stride, size_t hd, size_t len, float scale, float* att) {
    if (hd % 16 != 0) {
      scores_rows_v8<Avx512Vnni, H>(q, k, stride, hd, len, scale, att);
      return;
    }
    constexpr size_t K = 16 / H;  // keys a pass: 16 (head, key) sums reduced together (3 heads: 15, a[15] zero)
    const size_t row_bytes = stride * sizeof(T), ahead = std::max(2 * K * row_bytes, kKeyAhead);
    size_t p = 0;
    for (; p + K <= len; p += K) {
      const auto* kp = reinterpret_cast<const uint8_t*>(k + p * stride);
      for (size_t off = 0; off < K * row_bytes; off += 64) __builtin_prefetch(kp + ahead + off);
      __m512 a[16];
      for (size_t i = 0; i < 16; ++i) a[i] = _mm512_setzero_ps();
      for (size_t d = 0; d < hd; d += 16) {
        __m512 qv[H];
        for (size_t h = 0; h < H; ++h) qv[h] = _mm512_loadu_ps(q + h * hd + d);
        for (size_t j = 0; j < K; ++j) {
          const __m512 kj = load16(k + (p + j) * stride + d);
          for (size_t h = 0; h < H; ++h) a[h * K + j] = _mm512_fmadd_ps(qv[h], kj, a[h * K + j]);
        }
      }
      __m512 f[8];
      for (size_t i = 0; i < 8; ++i) f[i] = fold_pairs(a[2 * i], a[2 * i + 1]);
      store_scores<H, K>(_mm512_mul_ps(reduce_folded(f), _mm512_set1_ps(scale)), att + p);
    }
    for (; p < len; ++p) {  // the tail: each key alone, in the same order
      for (size_t h = 0; h < H; ++h) {
        __m512 acc = _mm512_setzero_ps();
        for (size_t d = 0; d < hd; d += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + h * hd + d), load16(k + p * stride + d), acc);
        att[h * kAttendChunk + p] = hsum8_order(fold(acc)) * scale;
      }
    }
  }

  // The lane sums of 16 accumulators at once, in score_frame's order for each (lanes l and l + 8
  // folded, then hsum8's ((f0 + f1) + (f2 + f3)) + ((f4 + f5) + (f6 + f7))), by a transposing tree:
  // every shuffle and add serves 16 sums (30 shuffles, 15 adds, one permutation for 16 scores,
  // where a fold and hsum8 per eight took about three shuffles a score: the decode's bottleneck).
  // fold_pairs(a, b): the folded lanes of a in lanes 0-7, of b in 8-15.
  static __m512 fold_pairs(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xee));
  }
  // f[i]: eight lanes of sum i = 2i in lanes 0-7 and of sum 2i + 1 in lanes 8-15; returns the 16
  // sums in order, each ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
  static __m512 reduce_folded(const __m512 f[8]) {
    return reduce_folded(f, [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); });
  }
  // The same tree with add(a, b) for the lanes' sums (reduce_folded_i32: int32 adds).
  template <class Add>
  static __m512 reduce_folded(const __m512 f[8], Add add) {
    __m512 t[4], u[2];
    for (size_t i = 0; i < 4; ++i) t[i] = add(_mm512_shuffle_ps(f[2 * i], f[2 * i + 1], 0x88), _mm512_shuffle_ps(f[2 * i], f[2 * i + 1], 0xdd));
    for (size_t i = 0; i < 2; ++i) u[i] = add(_mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0x88), _mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0xdd));
    const __m512 r = add(_mm512_shuffle_f32x4(u[0], u[1], 0x88), _mm512_shuffle_f32x4(u[0], u[1], 0xdd));
    // r's lanes hold the sums 0 2 4 6 1 3 5 7 8 10 12 14 9 11 13 15: back in order.
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15), r);
  }
  // Lanes h·K..h·K + K − 1: head h's scores of K consecutive keys, to att + h·kAttendChunk (K =
  // 16/H; three heads: 5 keys a pass of F32/F16 scores, 4 of int8 ones, the last lanes unused).
  template <size_t H, size_t K = 16 / H>
  static void store_scores(__m512 s, float* att) {
    if constexpr (H * K != 16) {  // masked stores: lanes h·K.. land at att + h·kAttendChunk
      for (size_t h = 0; h < H; ++h)
        _mm512_mask_storeu_ps(att + h * (kAttendChunk - K), static_cast<__mmask16>(((1u << K) - 1) << (h * K)), s);
    } else if constexpr (H == 1) {
      _mm512_storeu_ps(att, s);
    } else if constexpr (H == 2) {
      _mm256_storeu_ps(att, _mm512_castps512_ps256(s));
      _mm256_storeu_pd(reinterpret_cast<double*>(att + kAttendChunk), _mm512_extractf64x4_pd(_mm512_castps_pd(s), 1));
    } else {
      static_assert(H == 4);
      _mm_storeu_ps(att, _mm512_castps512_ps128(s));
      _mm_storeu_ps(att + kAttendChunk, _mm512_extractf32x4_ps(s, 1));
      _mm_storeu_ps(att + 2 * kAttendChunk, _mm512_extractf32x4_ps(s, 2));
      _mm_storeu_ps(att + 3 * kAttendChunk, _mm512_extractf32x4_ps(s, 3));
    }
  }

  // The prefill tile's keys (attend_chunk_impl.h's use_panel), 16 keys a block, so a query scores
  // 16 keys per FMA or vpdpbusd with its elements broadcast (an outer-product micro-tile):
  //   F32 / F16 keys (head_dim % 16 == 0): [hd][16] floats, element d of the block's key j at d·16 + j;
  //   Q8_0 / Q4_0 keys (head_dim ≤ 256): [nb][8][16] int32, the four bytes u = k + o of key j's
  //   values 4l..4l+3 of block b at (b·8 + l)·16 + j (key_bytes), then [nb][16] floats, key j's
  //   scale of block b at b·16 + j.
  static constexpr bool kPanel = true;
  static bool panel_fits(KvType t, size_t hd) { return attend_int8_keys(t) ? hd / kBlock <= kMaxBlocks : hd % 16 == 0; }
  static size_t panel_floats(KvType t, size_t hd) { return attend_int8_keys(t) ? hd / kBlock * (8 + 1) * 16 : hd * 16; }
  // A 16 × 16 transpose: r[i] becomes the column i of the rows r[0..16).
  static void transpose16(__m512 r[16]) {
    __m512 t[16], u[16];
    for (size_t i = 0; i < 16; i += 2) {  // pairs of rows interleaved: t[i] (elements 4L, 4L+1), t[i+1] (4L+2, 4L+3)
      t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    auto lo = [](__m512 a, __m512 b) { return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b))); };
    auto hi = [](__m512 a, __m512 b) { return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b))); };
    for (size_t i = 0; i < 16; i += 4) {  // u[i + e]: in 128-bit lane L, element 4L + e of rows i..i+3
      u[i] = lo(t[i], t[i + 2]);
      u[i + 1] = hi(t[i], t[i + 2]);
      u[i + 2] = lo(t[i + 1], t[i + 3]);
      u[i + 3] = hi(t[i + 1], t[i + 3]);
    }
    for (size_t e = 0; e < 4; ++e) {  // the 4 × 4 transpose of 128-bit lanes across u[e], u[4 + e], u[8 + e], u[12 + e]
      const __m512 v0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88), v1 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xdd);
      const __m512 w0 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88), w1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xdd);
      r[e] = _mm512_shuffle_f32x4(v0, w0, 0x88);
      r[4 + e] = _mm512_shuffle_f32x4(v1, w1, 0x88);
      r[8 + e] = _mm512_shuffle_f32x4(v0, w0, 0xdd);
      r[12 + e] = _mm512_shuffle_f32x4(v1, w1, 0xdd);
    }
  }
  // count ≤ 16 key rows as one panel block; the missing keys are zeros.
  static void panel_block(KvType t, const uint8_t* const rows[16], size_t count, size_t hd, float* out) {
    if (attend_int8_keys(t)) {
      t == KvType::q4_0 ? panel_block_int8<true>(rows, count, hd, out) : panel_block_int8<false>(rows, count, hd, out);
      return;
    }
    for (size_t d0 = 0; d0 < hd; d0 += 16) {
      __m512 r[16];
      for (size_t j = 0; j < 16; ++j) {
        if (j >= count) {
          r[j] = _mm512_setzero_ps();
        } else if (t == KvType::f16) {
          r[j] = load16(reinterpret_cast<const uint16_t*>(rows[j]) + d0);
        } else {
          r[j] = load16(reinterpret_cast<const float*>(rows[j]) + d0);
        }
      }
      transpose16(r);
      for (size_t i = 0; i < 16; ++i) _mm512_storeu_ps(out + (d0 + i) * 16, r[i]);
    }
  }
  template <bool Q4>
  static void panel_block_int8(const uint8_t* const rows[16], size_t count, size_t hd, float* out) {
    constexpr size_t bytes = Q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
    const size_t nb = hd / kBlock;
    auto* lanes = reinterpret_cast<uint8_t*>(out);
    float* dk = out + nb * 8 * 16;
    for (size_t j = 0; j < 16; ++j) {
      for (size_t b = 0; b < nb; ++b) {
        alignas(32) int32_t u[8] = {};
        dk[b * 16 + j] = 0.0f;
        if (j < count) {
          _mm256_store_si256(reinterpret_cast<__m256i*>(u), key_bytes<Q4>(rows[j] + b * bytes));
          dk[b * 16 + j] = half_at(rows[j] + b * bytes);
        }
        for (size_t l = 0; l < 8; ++l) std::memcpy(lanes + ((b * 8 + l) * 16 + j) * sizeof(int32_t), &u[l], sizeof(int32_t));
      }
    }
  }
  // att[h·kAttendChunk + j] = scale · q_h·k_j for H heads (int8 queries as scores takes them;
  // qstart[h·nb + b] = −o·Σ of block b's 32 query values) and the 16 keys of the panel block pb,
  // in scores' arithmetic (int8_term): per head and block the eight lanes' vpdpbusd chained into
  // the exact int32 block sum of 16 keys at once (two chains, the even and odd lanes, added:
  // integers), then scaled by d_k·d_q and added in block order (one FMA). Head sizes 64 and 128 take a
  // copy with the block count a constant (NB): straight-line code.
  template <size_t H>
  static void panel_scores_int8(const int8_t* qs, const float* qd, const int32_t* qstart, const float* pb, size_t hd, float scale,
                                float* att) {
    switch (hd) {
      case 64: return panel_scores_int8_n<H, 2>(qs, qd, qstart, pb, hd, scale, att);
      case 128: return panel_scores_int8_n<H, 4>(qs, qd, qstart, pb, hd, scale, att);
      default: return panel_scores_int8_n<H, 0>(qs, qd, qstart, pb, hd, scale, att);
    }
  }
  template <size_t H, size_t NB>  // NB: hd / 32, or 0 when it is read from hd
  static void panel_scores_int8_n(const int8_t* qs, const float* qd, const int32_t* qstart, const float* pb, size_t hd, float scale,
                                  float* att) {
    const size_t nb = NB ? NB : hd / kBlock;
    const int32_t* lanes = reinterpret_cast<const int32_t*>(pb);
    const float* dk = pb + nb * 8 * 16;
    __m512 s[H];
    for (size_t h = 0; h < H; ++h) s[h] = _mm512_setzero_ps();
#pragma GCC unroll 4
    for (size_t b = 0; b < nb; ++b) {
      __m512i even[H], odd[H];
      for (size_t h = 0; h < H; ++h) {
        even[h] = _mm512_set1_epi32(qstart[h * nb + b]);
        odd[h] = _mm512_setzero_si512();
      }
      for (size_t l = 0; l < 8; l += 2) {
        const __m512i k0 = _mm512_loadu_si512(lanes + (b * 8 + l) * 16), k1 = _mm512_loadu_si512(lanes + (b * 8 + l + 1) * 16);
        for (size_t h = 0; h < H; ++h) {
          int32_t q0, q1;
          std::memcpy(&q0, qs + h * hd + b * kBlock + 4 * l, sizeof q0);
          std::memcpy(&q1, qs + h * hd + b * kBlock + 4 * l + 4, sizeof q1);
          even[h] = _mm512_dpbusd_epi32(even[h], k0, _mm512_set1_epi32(q0));
          odd[h] = _mm512_dpbusd_epi32(odd[h], k1, _mm512_set1_epi32(q1));
        }
      }
      const __m512 dkb = _mm512_loadu_ps(dk + b * 16);
      for (size_t h = 0; h < H; ++h) {
        s[h] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(even[h], odd[h])), _mm512_mul_ps(dkb, _mm512_set1_ps(qd[h * nb + b])), s[h]);
      }
    }
    for (size_t h = 0; h < H; ++h) _mm512_storeu_ps(att + h * kAttendChunk, _mm512_mul_ps(s[h], _mm512_set1_ps(scale)));
  }

  // att[h·kAttendChunk + j] = scale · q_h·k_j for H heads (q_h at q + h·hd) and the 16 keys of
  // the panel block pb, in scores_rows' arithmetic: lane l's FMA chain over d ≡ l (mod 16) in
  // order, folded with lane l + 8's, the eight reduced in hsum8's order; here every step is a
  // vertical operation on 16 keys at once. Head sizes 64 and 128 take a copy with the chain
  // length a constant (N = hd / 16): straight-line code without spills (the loop over a run-time
  // length kept each pair of lanes' eight accumulators on the stack), whose independent chains
  // the core overlaps.
  template <size_t H>
  static void panel_scores(const float* q, const float* pb, size_t hd, float scale, float* att) {
    switch (hd) {
      case 64: return panel_scores_n<H, 4>(q, pb, hd, scale, att);
      case 128: return panel_scores_n<H, 8>(q, pb, hd, scale, att);
      default: return panel_scores_n<H, 0>(q, pb, hd, scale, att);
    }
  }
  template <size_t H, size_t N>  // N: hd / 16, or 0 when it is read from hd
  static void panel_scores_n(const float* q, const float* pb, size_t hd, float scale, float* att) {
    const size_t steps = N ? N : hd / 16;
    auto folded = [&](size_t l, __m512* f) __attribute__((always_inline)) {  // lane l + lane l + 8
      __m512 a[H], c[H];
      for (size_t h = 0; h < H; ++h) a[h] = c[h] = _mm512_setzero_ps();
#pragma GCC unroll 8
      for (size_t i = 0; i < steps; ++i) {
        const size_t d = l + 16 * i;
        const __m512 ka = _mm512_loadu_ps(pb + d * 16), kc = _mm512_loadu_ps(pb + (d + 8) * 16);
        for (size_t h = 0; h < H; ++h) {
          a[h] = _mm512_fmadd_ps(_mm512_set1_ps(q[h * hd + d]), ka, a[h]);
          c[h] = _mm512_fmadd_ps(_mm512_set1_ps(q[h * hd + d + 8]), kc, c[h]);
        }
      }
      for (size_t h = 0; h < H; ++h) f[h] = _mm512_add_ps(a[h], c[h]);
    };
    auto quad = [&](size_t l, __m512* out) __attribute__((always_inline)) {  // ((f_l + f_l+1) + (f_l+2 + f_l+3))
      __m512 x[H], y[H], s[H];
      folded(l, x);
      folded(l + 1, y);
      for (size_t h = 0; h < H; ++h) s[h] = _mm512_add_ps(x[h], y[h]);
      folded(l + 2, x);
      folded(l + 3, y);
      for (size_t h = 0; h < H; ++h) out[h] = _mm512_add_ps(s[h], _mm512_add_ps(x[h], y[h]));
    };
    __m512 lo[H], hi[H];
    quad(0, lo);
    quad(4, hi);
    for (size_t h = 0; h < H; ++h) _mm512_storeu_ps(att + h * kAttendChunk, _mm512_mul_ps(_mm512_add_ps(lo[h], hi[h]), _mm512_set1_ps(scale)));
  }

  // o_h += Σ_p att_h,p · v_p: 16·W columns a pass, W = 16/H vectors per head where the head is
  // that wide (16 independent FMA chains, each V vector loaded once for the H heads), else the
  // widest of 4, 2, 1 that divides it; value(p, d) gives the 16 floats of position p from column
  // d. Each column's chain runs over the positions in order whatever the width, so the width
  // does not change the bits.
  // values(p, d0, vv, W) fills vv[0..W) with the 16·W floats of position p from column d0.
  // The first pass prefetches the rows kValueAhead positions ahead (row(p): row p's first byte,
  // row_bytes long): in a decode step the rows come from DRAM, in chunks that cross 4 KiB pages
  // where the hardware's stream prefetch stops.
  static constexpr size_t kValueAhead = 16;
  template <size_t H, class Values, class Row>
  static void accumulate(const float* att, size_t hd, size_t len, float* out, size_t ps, Values&& values, Row&& row, size_t row_bytes) {
    auto run = [&](auto width) __attribute__((always_inline)) {
      constexpr size_t W = decltype(width)::value;
      for (size_t d0 = 0; d0 < hd; d0 += 16 * W) {
        __m512 o[H][W];
        for (size_t h = 0; h < H; ++h)
          for (size_t j = 0; j < W; ++j) o[h][j] = _mm512_loadu_ps(out + h * ps + d0 + 16 * j);
        for (size_t p = 0; p < len; ++p) {
          if (d0 == 0) {
            const uint8_t* ahead = row(p + kValueAhead);
            for (size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(ahead + off);
          }
          __m512 vv[W];
          values(p, d0, vv, width);
          for (size_t h = 0; h < H; ++h) {
            const __m512 ah = _mm512_set1_ps(att[h * kAttendChunk + p]);
            for (size_t j = 0; j < W; ++j) o[h][j] = _mm512_fmadd_ps(ah, vv[j], o[h][j]);
          }
        }
        for (size_t h = 0; h < H; ++h)
          for (size_t j = 0; j < W; ++j) _mm512_storeu_ps(out + h * ps + d0 + 16 * j, o[h][j]);
      }
    };
    constexpr size_t kWide = 16 / H;
    if (hd % (16 * kWide) == 0) {
      run(std::integral_constant<size_t, kWide>{});
    } else if (kWide > 4 && hd % 64 == 0) {
      run(std::integral_constant<size_t, 4>{});
    } else if (kWide > 2 && hd % 32 == 0) {
      run(std::integral_constant<size_t, 2>{});
    } else {
      run(std::integral_constant<size_t, 1>{});
    }
  }
  template <size_t H, class T>
  static void accumulate_values(const float* att, const T* v, size_t stride, size_t hd, size_t len, float* out, size_t ps) {
    if (hd % 16 != 0) {
      accumulate_values_v8<Avx512Vnni, H>(att, v, stride, hd, len, out, ps);
      return;
    }
    accumulate<H>(
        att, hd, len, out, ps,
        [v, stride](size_t p, size_t d0, __m512* vv, auto w) __attribute__((always_inline)) {
          for (size_t j = 0; j < decltype(w)::value; ++j) vv[j] = load16(v + p * stride + d0 + 16 * j);
        },
        [v, stride](size_t p) { return reinterpret_cast<const uint8_t*>(v + p * stride); }, hd * sizeof(T));
  }
  // attend_quantize_query's bytes, sixteen lanes a vector: max |q| of the block (the non-finite
  // test: |q| < ∞, false for a NaN), d and 127 / max by the same divisions, then q · (127 / max)
  // rounded to a float and converted to the nearest integer, ties to even (what the reference's
  // adding and taking back 1.5·2^23 does for |x| ≤ 127). A decode step quantizes each head's query
  // once per chunk of every layer: the scalar loop was 7-9 % of a Q8_0 decode.
  static void quantize_query(const float* q, size_t hd, int8_t* qs, float* d) {
    const __m512 inf = _mm512_set1_ps(INFINITY);
    for (size_t b = 0; b < hd / kBlock; ++b, q += kBlock, qs += kBlock) {
      const __m512 x0 = _mm512_loadu_ps(q), x1 = _mm512_loadu_ps(q + 16);
      const __m512 a0 = _mm512_abs_ps(x0), a1 = _mm512_abs_ps(x1);
      if ((_mm512_cmp_ps_mask(a0, inf, _CMP_LT_OQ) & _mm512_cmp_ps_mask(a1, inf, _CMP_LT_OQ)) != 0xffff) {
        d[b] = NAN;
        std::memset(qs, 0, kBlock);
        continue;
      }
      const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
      d[b] = amax / 127.0f;
      const __m512 id = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
      constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(_mm512_cvt_roundps_epi32(_mm512_mul_ps(x0, id), kNearest)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), _mm512_cvtepi32_epi8(_mm512_cvt_roundps_epi32(_mm512_mul_ps(x1, id), kNearest)));
    }
  }

  // The softmax numerators sixteen scores a vector: the maximum, then e^(s − m) by exp16 and
  // their sum (the last, partial vector masked). Every score goes through the same arithmetic
  // whatever its place, and the sum's order depends only on len, so a row alone and a row in a
  // tile get the same bits.
  static __m512 exp16(__m512 x) {  // exp8's argument reduction and polynomial, 2^n by vscalefps
    x = _mm512_max_ps(_mm512_set1_ps(-87.0f), _mm512_min_ps(_mm512_set1_ps(88.0f), x));  // NaN stays NaN (the second operand)
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x));
    __m512 p = _mm512_fmadd_ps(r, _mm512_set1_ps(1.9875691500e-4f), _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    const __m512 e = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(e, n);
  }
  static void numerators(float* a, size_t len, float* out) {
    const size_t full = len / 16 * 16;
    const __mmask16 tail = static_cast<__mmask16>((1u << (len - full)) - 1);
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (size_t p = 0; p < full; p += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(a + p));
    m = _mm512_mask_max_ps(m, tail, m, _mm512_maskz_loadu_ps(tail, a + full));
    const float mx = _mm512_reduce_max_ps(m);
    const __m512 mv = _mm512_set1_ps(mx);
    __m512 sum = _mm512_setzero_ps();
    for (size_t p = 0; p < full; p += 16) {
      const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(a + p), mv));
      _mm512_storeu_ps(a + p, e);
      sum = _mm512_add_ps(sum, e);
    }
    if (tail) {
      const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, a + full), mv));
      _mm512_mask_storeu_ps(a + full, tail, e);
      sum = _mm512_mask_add_ps(sum, tail, sum, e);
    }
    out[0] = mx;
    out[1] = _mm512_reduce_add_ps(sum);
  }

  // accumulate_values over Q8_0 rows (stride bytes apart), each 16 values converted in registers
  // to the floats kv_load would give (d · q, exact), so the sums are those of staged rows; a
  // block's scale converted once for its 32 values where a pass holds whole blocks.
  static constexpr bool kQ8ValuesDirect = true;
  template <size_t H>
  static void accumulate_q8(const float* att, const uint8_t* v, size_t stride, size_t hd, size_t len, float* out, size_t ps) {
    auto sixteen = [](__m512 d, const uint8_t* qs) __attribute__((always_inline)) {
      return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)))));
    };
    accumulate<H>(
        att, hd, len, out, ps,
        [v, stride, sixteen](size_t p, size_t d0, __m512* vv, auto w) __attribute__((always_inline)) {
          constexpr size_t W = decltype(w)::value;
          const uint8_t* row = v + p * stride;
          if constexpr (W % 2 == 0) {  // d0 starts a block: two vectors a block
            for (size_t j = 0; j < W; j += 2) {
              const uint8_t* blk = row + (d0 + 16 * j) / kBlock * sizeof(BlockQ8_0);
              const __m512 d = _mm512_set1_ps(half_at(blk));
              vv[j] = sixteen(d, blk + 2);
              vv[j + 1] = sixteen(d, blk + 2 + 16);
            }
          } else {
            for (size_t j = 0; j < W; ++j) {
              const size_t c = d0 + 16 * j;
              const uint8_t* blk = row + c / kBlock * sizeof(BlockQ8_0);
              vv[j] = sixteen(_mm512_set1_ps(half_at(blk)), blk + 2 + c % kBlock);
            }
          }
        },
        [v, stride](size_t p) { return v + p * stride; }, hd / kBlock * sizeof(BlockQ8_0));
  }

  // The key values as unsigned bytes u = k + o (Q8_0: k xor 0x80, o = 128; Q4_0: the nibble,
  // o = 8) against the signed query: vpdpbusd from a start of −o·Σq per lane gives Σ q·k exactly.
  // Two keys per zmm (lanes 0-7 the first, 8-15 the second), so each vpdpbusd, conversion and
  // FMA serves two keys; a lane's arithmetic is the ymm tail's, so a key's bits do not depend on
  // whether it was paired.
  static constexpr size_t kMaxBlocks = 8;  // head_dim ≤ 256; longer heads take the per-block path
  template <bool Q4>
  static __m256i key_bytes(const uint8_t* blk) {
    if constexpr (Q4) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
      return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0f));
    } else {
      return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2)), _mm256_set1_epi8(static_cast<char>(0x80)));
    }
  }

  // The int8 scores of a run of key rows in the reference's arithmetic (int8_term): a pass of
  // K16 = 16/H keys (two a vector: lanes 0-7 the first, 8-15 the second), per block one vpdpbusd
  // per head and pair of keys; the 16 (head, key) block sums reduced exactly in int32 by
  // reduce_folded's transposing tree, then scaled by d_k·d_q and added in block order by one FMA, 16
  // scores at once. The tail (fewer than K16 keys) takes int8_term one key and head at a time: the same
  // bits.
  template <bool Q4, size_t H>
  static void scores(const int8_t* qs, const int8_t* q_abs, const float* qd, const uint8_t* k, size_t stride, size_t hd, size_t len,
                     float scale, float* att) {
    constexpr size_t bytes = Q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
    const size_t nb = hd / kBlock;
    if (nb > kMaxBlocks) {
      scores_int8<Avx512Vnni, Q4, H>(qs, q_abs, qd, k, stride, hd, len, scale, att);
      return;
    }
    // Keys a pass (two a vector); three heads take 4 keys (lanes 12-15 unused).
    constexpr size_t K16 = 16 / H / 2 * 2, kPairs = K16 / 2;
    // Per head and block: the query bytes in both halves, the start −o·Σq; per block the lanes'
    // d_q (lane h·K16 + key), and each lane's key.
    __m512i qv[H][kMaxBlocks], start[H][kMaxBlocks];
    __m512 dq[kMaxBlocks];
    const __m512i offset = _mm512_set1_epi8(static_cast<char>(Q4 ? 8 : 0x80));
    alignas(64) int32_t key_of[16] = {};
    alignas(64) float dq_lanes[16] = {};
    for (size_t i = 0; i < H * K16; ++i) key_of[i] = static_cast<int32_t>(i % K16);
    const __m512i key_index = _mm512_load_si512(key_of);
    alignas(64) int32_t offsets[16] = {};  // key j's row at + j·stride
    for (size_t j = 0; j < K16; ++j) offsets[j] = static_cast<int32_t>(j * stride);
    const __m512i row_offset = _mm512_load_si512(offsets);
    for (size_t b = 0; b < nb; ++b) {
      for (size_t h = 0; h < H; ++h) {
        qv[h][b] = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + h * hd + b * kBlock)));
        start[h][b] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), offset, qv[h][b]));
        for (size_t j = 0; j < K16; ++j) dq_lanes[h * K16 + j] = qd[h * nb + b];
      }
      dq[b] = _mm512_load_ps(dq_lanes);
    }
    const size_t ahead = std::max(2 * K16 * stride, kKeyAhead);
    size_t p = 0;
    for (; p + K16 <= len; p += K16) {
      const uint8_t* kp = k + p * stride;
      for (size_t off = 0; off < K16 * stride; off += 64) __builtin_prefetch(kp + ahead + off);
      __m512 sum = _mm512_setzero_ps();
      for (size_t b = 0; b < nb; ++b) {
        __m512i f[8];
        for (size_t i = H * kPairs; i < 8; ++i) f[i] = _mm512_setzero_si512();
        for (size_t j = 0; j < kPairs; ++j) {
          const uint8_t* b0 = kp + 2 * j * stride + b * bytes;
          const uint8_t* b1 = b0 + stride;
          const __m512i kv = _mm512_inserti64x4(_mm512_castsi256_si512(key_bytes<Q4>(b0)), key_bytes<Q4>(b1), 1);
          for (size_t h = 0; h < H; ++h) f[h * kPairs + j] = _mm512_dpbusd_epi32(start[h][b], kv, qv[h][b]);
        }
        const __m512 dk = _mm512_permutexvar_ps(key_index, key_scales<K16>(kp + b * bytes, row_offset));
        sum = _mm512_fmadd_ps(_mm512_cvtepi32_ps(reduce_folded_i32(f)), _mm512_mul_ps(dk, dq[b]), sum);
      }
      store_scores<H, K16>(_mm512_mul_ps(sum, _mm512_set1_ps(scale)), att + p);
    }
    for (; p < len; ++p) {  // the tail: one key and head at a time
      for (size_t h = 0; h < H; ++h) {
        float s = 0;
        for (size_t b = 0; b < nb; ++b) {
          const uint8_t* blk = k + p * stride + b * bytes;
          const __m256i x = _mm256_dpbusd_epi32(_mm512_castsi512_si256(start[h][b]), key_bytes<Q4>(blk), _mm512_castsi512_si256(qv[h][b]));
          s = int8_term(s, half_at(blk), qd[h * nb + b], _mm512_reduce_add_epi32(_mm512_zextsi256_si512(x)));
        }
        att[h * kAttendChunk + p] = s * scale;
      }
    }
  }
  // The F16 scales at base + offset[j] of N keys as floats in lanes 0..N-1 (the others undefined):
  // a gather of N 32-bit words, their low halves converted. (Stores of the halves to the stack
  // and one vector load stalled on store forwarding: 40 % slower.)
  template <size_t N>
  static __m512 key_scales(const uint8_t* base, __m512i offset) {
    if constexpr (N <= 4) {
      const __m128i g = _mm_i32gather_epi32(reinterpret_cast<const int*>(base), _mm512_castsi512_si128(offset), 1);
      return _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtepi32_epi16(g)));
    } else if constexpr (N <= 8) {
      const __m256i g = _mm256_i32gather_epi32(reinterpret_cast<const int*>(base), _mm512_castsi512_si256(offset), 1);
      return _mm512_castps256_ps512(_mm256_cvtph_ps(_mm256_cvtepi32_epi16(g)));
    } else {
      return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_i32gather_epi32(offset, base, 1)));
    }
  }
  // reduce_folded over int32 lanes (the same shuffles, integer adds): the 16 exact sums of eight
  // lanes each (any order: integers).
  static __m512i reduce_folded_i32(const __m512i f[8]) {
    __m512 x[8];
    for (size_t i = 0; i < 8; ++i) x[i] = _mm512_castsi512_ps(f[i]);
    auto add = [](__m512 a, __m512 b) { return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b))); };
    return _mm512_castps_si512(reduce_folded(x, add));
  }
};

}  // namespace

void attend_quantize_query_avx512(const float* q, size_t head_dim, int8_t* qs, float* d) { Avx512Vnni::quantize_query(q, head_dim, qs, d); }

void attend_chunk_avx512(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk, size_t pos0,
                         size_t rows, float scale, float softcap, float* scratch, float* part) {
  chunk_impl<Avx512Vnni>(q, q_stride, heads, kv, hd, chunk, pos0, rows, scale, softcap, scratch, part);
}

}  // namespace qmm::llm
