#include "llm/attention/attend_avx512.h"

#include <immintrin.h>

#include "llm/attention/attend_chunk_impl.h"

namespace qmm::llm {
namespace {

struct Avx512Vnni {
  using Kb = __m256i;
  static Kb load_q8(const uint8_t* qs) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)); }
  static Kb load_q4(const uint8_t* qs) {  // low nibbles are values 0-15, high nibbles 16-31
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i x = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0f));
    return _mm256_sub_epi8(x, _mm256_set1_epi8(8));
  }
  // |q| (unsigned) · (k with q's sign), four products summed per int32 lane: one vpdpbusd.
  static v8 dot(Kb k, const int8_t* q, const int8_t* q_abs) {
    const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q_abs));
    return std::bit_cast<v8>(_mm256_cvtepi32_ps(_mm256_dpbusd_epi32(_mm256_setzero_si256(), qa, _mm256_sign_epi8(k, qv))));
  }
  static constexpr bool kF16Direct = true;
  static v8 load8_f16(const uint16_t* p) { return std::bit_cast<v8>(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))); }
  static float half(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    return _cvtsh_ss(h);
  }
  // Q8_0 / Q4_0 rows as F32 (d · q, exact) sixteen values a conversion; F32 / F16 by kv_load (F16C).
  static void load_rows(KvType t, const uint8_t* rows, size_t stride, size_t count, float* out, size_t hd) {
    if (!attend_int8_keys(t)) {
      kv_load(t, rows, stride, count, out, hd);
      return;
    }
    const size_t bytes = t == KvType::q4_0 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
    for (size_t r = 0; r < count; ++r, rows += stride) {
      for (size_t b = 0; b < hd / kBlock; ++b, out += kBlock) {
        const uint8_t* blk = rows + b * bytes;
        const __m512 d = _mm512_set1_ps(half(blk));
        const __m256i q = t == KvType::q4_0 ? load_q4(blk + 2) : load_q8(blk + 2);
        _mm512_storeu_ps(out, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(q)))));
        _mm512_storeu_ps(out + 16, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(q, 1)))));
      }
    }
  }

  // F32 / F16 scores and value sums sixteen columns a vector (head_dim % 16 == 0; others take the
  // eight-column loops). A key's 16 lane sums are folded to 8 (lane i + lane i + 8), then reduced
  // in hsum8's order, whether the key was scored in a group or alone.
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
    constexpr size_t K = 8 / H;
    size_t p = 0;
    for (; p + K <= len; p += K) {
      const T* kp = k + p * stride;
      for (size_t off = 0; off < K * stride * sizeof(T); off += 64)
        _mm_prefetch(reinterpret_cast<const char*>(kp + 4 * K * stride) + off, _MM_HINT_T0);
      __m512 a[8];
      for (size_t i = 0; i < 8; ++i) a[i] = _mm512_setzero_ps();
      for (size_t d = 0; d < hd; d += 16) {
        __m512 kv[K];
        for (size_t j = 0; j < K; ++j) kv[j] = load16(kp + j * stride + d);
        for (size_t h = 0; h < H; ++h) {
          const __m512 qv = _mm512_loadu_ps(q + h * hd + d);
          for (size_t j = 0; j < K; ++j) a[h * K + j] = _mm512_fmadd_ps(qv, kv[j], a[h * K + j]);
        }
      }
      v8 f[8];
      for (size_t i = 0; i < 8; ++i) f[i] = fold(a[i]);
      const v8 sums = hsum8(f) * scale;
      for (size_t h = 0; h < H; ++h)
        for (size_t j = 0; j < K; ++j) att[h * kAttendChunk + p + j] = sums[h * K + j];
    }
    for (; p < len; ++p) {
      for (size_t h = 0; h < H; ++h) {
        __m512 acc = _mm512_setzero_ps();
        for (size_t d = 0; d < hd; d += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + h * hd + d), load16(k + p * stride + d), acc);
        const v8 x = fold(acc);
        att[h * kAttendChunk + p] = (((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]))) * scale;
      }
    }
  }
  // o_h += Σ_p att_h,p · v_p: 128/H columns a pass (each V vector loaded once for the H heads).
  template <size_t H, class T>
  static void accumulate_values(const float* att, const T* v, size_t stride, size_t hd, size_t len, float* out, size_t ps) {
    if (hd % 16 != 0) {
      accumulate_values_v8<Avx512Vnni, H>(att, v, stride, hd, len, out, ps);
      return;
    }
    constexpr size_t W = 8 / H;
    for (size_t d0 = 0; d0 < hd; d0 += 16 * W) {
      // w vectors per head: the constant W (so o stays in registers), fewer in a last, narrower pass.
      auto pass = [&](auto w) __attribute__((always_inline)) {
        __m512 o[H][W];
        for (size_t h = 0; h < H; ++h)
          for (size_t j = 0; j < w; ++j) o[h][j] = _mm512_loadu_ps(out + h * ps + d0 + 16 * j);
        for (size_t p = 0; p < len; ++p) {
          const T* vp = v + p * stride + d0;
          __m512 vv[W];
          for (size_t j = 0; j < w; ++j) vv[j] = load16(vp + 16 * j);
          for (size_t h = 0; h < H; ++h) {
            const __m512 ah = _mm512_set1_ps(att[h * kAttendChunk + p]);
            for (size_t j = 0; j < w; ++j) o[h][j] = _mm512_fmadd_ps(ah, vv[j], o[h][j]);
          }
        }
        for (size_t h = 0; h < H; ++h)
          for (size_t j = 0; j < w; ++j) _mm512_storeu_ps(out + h * ps + d0 + 16 * j, o[h][j]);
      };
      if (hd - d0 >= 16 * W) {
        pass(std::integral_constant<size_t, W>{});
      } else {
        pass((hd - d0) / 16);
      }
    }
  }

  // accumulate_values over Q8_0 rows (stride bytes apart), each 16 values converted in registers
  // to the floats kv_load would give (d · q, exact), so the sums are those of staged rows.
  static constexpr bool kQ8ValuesDirect = true;
  template <size_t H>
  static void accumulate_q8(const float* att, const uint8_t* v, size_t stride, size_t hd, size_t len, float* out, size_t ps) {
    constexpr size_t W = 8 / H;
    auto values = [&](const uint8_t* row, size_t d) __attribute__((always_inline)) {
      const uint8_t* blk = row + d / kBlock * sizeof(BlockQ8_0);
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2 + d % kBlock));
      return _mm512_mul_ps(_mm512_set1_ps(half(blk)), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)));
    };
    for (size_t d0 = 0; d0 < hd; d0 += 16 * W) {
      auto pass = [&](auto w) __attribute__((always_inline)) {
        __m512 o[H][W];
        for (size_t h = 0; h < H; ++h)
          for (size_t j = 0; j < w; ++j) o[h][j] = _mm512_loadu_ps(out + h * ps + d0 + 16 * j);
        for (size_t p = 0; p < len; ++p) {
          __m512 vv[W];
          for (size_t j = 0; j < w; ++j) vv[j] = values(v + p * stride, d0 + 16 * j);
          for (size_t h = 0; h < H; ++h) {
            const __m512 ah = _mm512_set1_ps(att[h * kAttendChunk + p]);
            for (size_t j = 0; j < w; ++j) o[h][j] = _mm512_fmadd_ps(ah, vv[j], o[h][j]);
          }
        }
        for (size_t h = 0; h < H; ++h)
          for (size_t j = 0; j < w; ++j) _mm512_storeu_ps(out + h * ps + d0 + 16 * j, o[h][j]);
      };
      if (hd - d0 >= 16 * W) {
        pass(std::integral_constant<size_t, W>{});
      } else {
        pass((hd - d0) / 16);
      }
    }
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

  template <bool Q4, size_t H>
  static void scores(const int8_t* qs, const int8_t* q_abs, const float* qd, const uint8_t* k, size_t stride, size_t hd, size_t len,
                     float scale, float* att) {
    constexpr size_t K = 8 / H, bytes = Q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
    const size_t nb = hd / kBlock;
    if (nb > kMaxBlocks) {
      scores_int8<Avx512Vnni, Q4, H>(qs, q_abs, qd, k, stride, hd, len, scale, att);
      return;
    }
    // Per head and block: the query bytes in both halves, the start −o·Σq, the scale d_q.
    __m512i qv[H][kMaxBlocks], start[H][kMaxBlocks];
    __m512 dq[H][kMaxBlocks];
    const __m512i offset = _mm512_set1_epi8(static_cast<char>(Q4 ? 8 : 0x80));
    for (size_t h = 0; h < H; ++h) {
      for (size_t b = 0; b < nb; ++b) {
        qv[h][b] = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + h * hd + b * kBlock)));
        start[h][b] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), offset, qv[h][b]));
        dq[h][b] = _mm512_set1_ps(qd[h * nb + b]);
      }
    }
    size_t p = 0;
    for (; p + K <= len; p += K) {
      const uint8_t* kp = k + p * stride;
      for (size_t off = 0; off < K * stride; off += 64) _mm_prefetch(reinterpret_cast<const char*>(kp + 4 * K * stride + off), _MM_HINT_T0);
      __m512 acc[H][K / 2];
      for (size_t h = 0; h < H; ++h)
        for (size_t j = 0; j < K / 2; ++j) acc[h][j] = _mm512_setzero_ps();
      for (size_t b = 0; b < nb; ++b) {
        for (size_t j = 0; j < K / 2; ++j) {
          const uint8_t* b0 = kp + 2 * j * stride + b * bytes;
          const uint8_t* b1 = b0 + stride;
          const __m512i kv = _mm512_inserti64x4(_mm512_castsi256_si512(key_bytes<Q4>(b0)), key_bytes<Q4>(b1), 1);
          const __m512 dk = _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(half(b0)), _mm512_set1_ps(half(b1)));
          for (size_t h = 0; h < H; ++h) {
            const __m512i sum = _mm512_dpbusd_epi32(start[h][b], kv, qv[h][b]);
            acc[h][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dk, dq[h][b]), acc[h][j]);
          }
        }
      }
      v8 a[8];
      for (size_t h = 0; h < H; ++h) {
        for (size_t j = 0; j < K / 2; ++j) {
          a[h * K + 2 * j] = std::bit_cast<v8>(_mm512_castps512_ps256(acc[h][j]));
          a[h * K + 2 * j + 1] = std::bit_cast<v8>(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[h][j]), 1));
        }
      }
      const v8 sums = hsum8(a) * scale;
      for (size_t h = 0; h < H; ++h)
        for (size_t j = 0; j < K; ++j) att[h * kAttendChunk + p + j] = sums[h * K + j];
    }
    for (; p < len; ++p) {
      for (size_t h = 0; h < H; ++h) {
        __m256 acc = _mm256_setzero_ps();
        for (size_t b = 0; b < nb; ++b) {
          const uint8_t* blk = k + p * stride + b * bytes;
          const __m256i sum = _mm256_dpbusd_epi32(_mm512_castsi512_si256(start[h][b]), key_bytes<Q4>(blk), _mm512_castsi512_si256(qv[h][b]));
          acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(_mm256_set1_ps(half(blk)), _mm512_castps512_ps256(dq[h][b])), acc);
        }
        const v8 a = std::bit_cast<v8>(acc);
        att[h * kAttendChunk + p] = (((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))) * scale;
      }
    }
  }
};

}  // namespace

void attend_chunk_avx512(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk, size_t pos0,
                         size_t rows, float scale, float softcap, float* scratch, float* part) {
  chunk_impl<Avx512Vnni>(q, q_stride, heads, kv, hd, chunk, pos0, rows, scale, softcap, scratch, part);
}

}  // namespace qmm::llm
