#include "kernels/x86/matmul_clamp_f32_bf16p_amxbf16.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "core/blocks.h"
#include "core/kquants.h"
#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx512_util.h"
#include "kernels/x86/lhs_quant_pack_bf16p16x32_f32.h"
#include "kernels/x86/matmul_clamp_f32_bf16p_scalar.h"
#include "kernels/x86/rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0.h"
#include "kernels/x86/rhs_pack_nxk_qau8c32pscalef16_qsi8c32.h"

namespace qmm {
namespace {

constexpr size_t kTile = 16;         // rows and columns of a C tile, 32-bit K pairs of an A / B tile
constexpr size_t kTileBytes = 1024;  // an A or B tile: 16 rows of 64 bytes

// GCC's tile loads are asm statements that do not tell the compiler they read memory (its
// tile stores do): a barrier keeps the vector stores that build a tile before its load.
inline void compiler_barrier() { __asm__ volatile("" ::: "memory"); }

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0..3: the F32 sums of rows (i0, i0 + 16) x columns (j0, j0 + 16), as 2·row + column;
// 4, 5: the A tiles of the two row tiles; 6, 7: the B tiles of the two column tiles.
// Every tile is 16 rows of 64 bytes.
void configure_tiles() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) c.rows[t] = kTile, c.colsb[t] = 64;
  compiler_barrier();
  _tile_loadconfig(&c);
}

// 16 bytes at p, one per 32-bit lane (zero-extended).
inline __m512i bytes16(const uint8_t* p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline __m512 f32(__m512i x) { return _mm512_cvtepi32_ps(x); }

// A packed 4-byte K chunk v of 16 columns is 64 bytes, column n's 4 values at 4n. Its quarter
// q (bytes16 of 16q) holds columns 4q..4q+3, lane 4·(column − 4q) + K position: the per-column
// scale s (one lane per column) goes with it as spread(s, q).
struct Spread {
  __m512i idx[4];
  Spread() {
    const __m512i col = _mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 2);
    for (int q = 0; q < 4; ++q) idx[q] = _mm512_add_epi32(col, _mm512_set1_epi32(4 * q));
  }
  __m512 operator()(__m512 s, size_t q) const { return _mm512_permutexvar_ps(idx[q], s); }
};

// The F32 weights of K chunk v in its four quarters -> rows 2v, 2v + 1 of a B tile (row kk:
// column n's BF16 pair (K 2kk, 2kk + 1) at bytes 4n..4n+3). vcvtne2ps2bf16 rounds to nearest
// even, as bf16p::bf16_from_f32.
struct Emit {
  __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  void operator()(const __m512 f[4], uint8_t* tile, size_t v) const {
    // 32-bit unit u of p0: column u/2, K pair u%2 (columns 0..7); p1 likewise for 8..15.
    const __m512i p0 = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(f[1], f[0]));
    const __m512i p1 = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(f[3], f[2]));
    _mm512_store_si512(tile + 128 * v, _mm512_permutex2var_epi32(p0, even, p1));
    _mm512_store_si512(tile + 128 * v + 64, _mm512_permutex2var_epi32(p0, odd, p1));
  }
};

struct Makers {
  Spread spread;
  Emit emit;
};

// A Q4_0 / Q8_0 block's 16 f16 d at `d16`, spread per quarter (s) with the offset of zero point
// z folded in (o = −z·d): w = fma(u, s, o) = d·(u − z), exact.
inline void block_scales(const uint8_t* d16, float z, const Makers& mk, __m512 s[4], __m512 o[4]) {
  const __m512 d = avx512::load_f16x16(d16);
  for (size_t q = 0; q < 4; ++q) s[q] = mk.spread(d, q), o[q] = _mm512_mul_ps(s[q], _mm512_set1_ps(-z));
}

// A weight type W supplies panel_bytes(k) (a 16-column panel) and tile(panel, b, out, mk):
// the B tile of 32-block b, its weights as matmul_clamp_f32_bf16p_scalar.cpp computes them.

// Q4_0 (qau4c32p): a block is 4 chunks of nibbles (low: K chunk v, high: v + 4, u = w + 8),
// then 16 f16 d. w = d·(u − 8) = fma(u, d, −8d): exact, as the reference's d·(u − 8).
struct Q4 {
  static size_t panel_bytes(size_t k) { return kTile * (k / kBlock) * 18; }
  static void tile(const uint8_t* panel, size_t b, uint8_t* out, const Makers& mk) {
    const uint8_t* blk = panel + b * kTile * 18;
    __m512 s[4], o[4];
    block_scales(blk + 16 * kTile, 8.0f, mk, s, o);
    const __m512i m4 = _mm512_set1_epi32(0x0f);
    for (size_t v = 0; v < 4; ++v) {
      __m512 lo[4], hi[4];
      for (size_t q = 0; q < 4; ++q) {
        const __m512i x = bytes16(blk + 64 * v + 16 * q);
        lo[q] = _mm512_fmadd_ps(f32(_mm512_and_si512(x, m4)), s[q], o[q]);
        hi[q] = _mm512_fmadd_ps(f32(_mm512_srli_epi32(x, 4)), s[q], o[q]);
      }
      mk.emit(lo, out, v);
      mk.emit(hi, out, v + 4);
    }
  }
};

// Q8_0 (qau8c32p): 8 chunks of u = w + 128, then 16 f16 d. w = fma(u, d, −128d), exact.
struct Q8 {
  static size_t panel_bytes(size_t k) { return kTile * (k / kBlock) * 34; }
  static void tile(const uint8_t* panel, size_t b, uint8_t* out, const Makers& mk) {
    const uint8_t* blk = panel + b * kTile * 34;
    __m512 s[4], o[4];
    block_scales(blk + 32 * kTile, 128.0f, mk, s, o);
    for (size_t v = 0; v < 8; ++v) {
      __m512 f[4];
      for (size_t q = 0; q < 4; ++q) f[q] = _mm512_fmadd_ps(f32(bytes16(blk + 64 * v + 16 * q)), s[q], o[q]);
      mk.emit(f, out, v);
    }
  }
};

// IQ4_NL (iq4nlp, Q4_0's bytes): w = d·v(nibble), v the code book (exact).
struct Iq4nl {
  static size_t panel_bytes(size_t k) { return kTile * (k / kBlock) * 18; }
  static void tile(const uint8_t* panel, size_t b, uint8_t* out, const Makers& mk) {
    const uint8_t* blk = panel + b * kTile * 18;
    const __m512 d = avx512::load_f16x16(blk + 16 * kTile);
    const __m512i book = _mm512_setr_epi32(kIq4nlValues[0], kIq4nlValues[1], kIq4nlValues[2], kIq4nlValues[3],
                                           kIq4nlValues[4], kIq4nlValues[5], kIq4nlValues[6], kIq4nlValues[7],
                                           kIq4nlValues[8], kIq4nlValues[9], kIq4nlValues[10], kIq4nlValues[11],
                                           kIq4nlValues[12], kIq4nlValues[13], kIq4nlValues[14], kIq4nlValues[15]);
    __m512 s[4];
    for (size_t q = 0; q < 4; ++q) s[q] = mk.spread(d, q);
    for (size_t v = 0; v < 4; ++v) {
      __m512 lo[4], hi[4];
      for (size_t q = 0; q < 4; ++q) {
        const __m512i x = bytes16(blk + 64 * v + 16 * q);
        lo[q] = _mm512_mul_ps(f32(_mm512_permutexvar_epi32(x, book)), s[q]);  // (the low 4 bits index)
        hi[q] = _mm512_mul_ps(f32(_mm512_permutexvar_epi32(_mm512_srli_epi32(x, 4), book)), s[q]);
      }
      mk.emit(lo, out, v);
      mk.emit(hi, out, v + 4);
    }
  }
};

// Q4_K (q4kp): 32-block j of a super-block is the low (j even) or high nibbles of its 32-byte
// group j/2, 8 chunks; scale d·sc_j and min dmin·m_j (exact). w = fmsub(q, d·sc_j, dmin·m_j):
// the product is exact, so one rounding, as the reference's (d·sc_j)·q − dmin·m_j.
struct Q4K {
  static size_t panel_bytes(size_t k) { return kTile * (k / kSuperBlock) * 148; }
  static void tile(const uint8_t* panel, size_t b, uint8_t* out, const Makers& mk) {
    const uint8_t* sb = panel + b / 8 * kTile * 148;
    const size_t j = b % 8;
    const uint8_t* sm = sb + 128 * kTile + 2 * kTile * j;
    const __m512 sc = _mm512_mul_ps(avx512::load_f16x16(sb + 144 * kTile), f32(bytes16(sm)));
    const __m512 mn = _mm512_mul_ps(avx512::load_f16x16(sb + 146 * kTile), f32(bytes16(sm + kTile)));
    __m512 s[4], o[4];
    for (size_t q = 0; q < 4; ++q) s[q] = mk.spread(sc, q), o[q] = mk.spread(mn, q);
    const uint8_t* qs = sb + 32 * kTile * (j / 2);
    const __m512i m4 = _mm512_set1_epi32(0x0f);
    for (size_t v = 0; v < 8; ++v) {
      __m512 f[4];
      for (size_t q = 0; q < 4; ++q) {
        const __m512i x = bytes16(qs + 64 * v + 16 * q);
        f[q] = _mm512_fmsub_ps(f32(j % 2 ? _mm512_srli_epi32(x, 4) : _mm512_and_si512(x, m4)), s[q], o[q]);
      }
      mk.emit(f, out, v);
    }
  }
};

// Q6_K (q6kp): 32-block j = 4h + t of a super-block: low 4 bits in ql chunks 16h + 8(t%2) + v
// (low nibbles for t < 2), high 2 bits at bit 2t of qh chunks 32 + 8h + v; the 16-element
// sub-block 2j + v/4 has scale d·sc (exact). w = (d·sc)·(q − 32), one rounding.
struct Q6K {
  static size_t panel_bytes(size_t k) { return kTile * (k / kSuperBlock) * 210; }
  static void tile(const uint8_t* panel, size_t b, uint8_t* out, const Makers& mk) {
    const uint8_t* sb = panel + b / 8 * kTile * 210;
    const size_t j = b % 8, h = j / 4, t = j % 4;
    const __m512 d = avx512::load_f16x16(sb + 208 * kTile);
    __m512 s[2][4];
    for (size_t g = 0; g < 2; ++g) {
      const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb + 192 * kTile + kTile * (2 * j + g)));
      const __m512 dsc = _mm512_mul_ps(d, f32(_mm512_cvtepi8_epi32(sc)));
      for (size_t q = 0; q < 4; ++q) s[g][q] = mk.spread(dsc, q);
    }
    const uint8_t* ql = sb + 64 * (16 * h + 8 * (t % 2));
    const uint8_t* qh = sb + 64 * (32 + 8 * h);
    const __m512i m4 = _mm512_set1_epi32(0x0f), m2 = _mm512_set1_epi32(3), bias = _mm512_set1_epi32(32);
    const unsigned hs = static_cast<unsigned>(2 * t);
    for (size_t v = 0; v < 8; ++v) {
      __m512 f[4];
      for (size_t q = 0; q < 4; ++q) {
        const __m512i l = bytes16(ql + 64 * v + 16 * q), hb = bytes16(qh + 64 * v + 16 * q);
        const __m512i low = t < 2 ? _mm512_and_si512(l, m4) : _mm512_srli_epi32(l, 4);
        const __m512i high = _mm512_slli_epi32(_mm512_and_si512(_mm512_srl_epi32(hb, _mm_cvtsi32_si128(static_cast<int>(hs))), m2), 4);
        f[q] = _mm512_mul_ps(f32(_mm512_sub_epi32(_mm512_or_si512(low, high), bias)), s[v / 4][q]);
      }
      mk.emit(f, out, v);
    }
  }
};

inline float* row_ptr(float* dst, size_t stride, size_t i) { return avx512::row_ptr(dst, stride, i); }

// GCC's tile intrinsics paste their tile number into the instruction text: C tile T (0..3)
// by name, one branch per tile.
template <int T>
[[gnu::always_inline]] inline void tile_zero() {
  if constexpr (T == 0) _tile_zero(0);
  if constexpr (T == 1) _tile_zero(1);
  if constexpr (T == 2) _tile_zero(2);
  if constexpr (T == 3) _tile_zero(3);
}
template <int T>
[[gnu::always_inline]] inline void tile_load(const void* p, size_t stride) {
  if constexpr (T == 0) _tile_loadd(0, p, stride);
  if constexpr (T == 1) _tile_loadd(1, p, stride);
  if constexpr (T == 2) _tile_loadd(2, p, stride);
  if constexpr (T == 3) _tile_loadd(3, p, stride);
}
template <int T>
[[gnu::always_inline]] inline void tile_store(void* p, size_t stride) {
  if constexpr (T == 0) _tile_stored(0, p, stride);
  if constexpr (T == 1) _tile_stored(1, p, stride);
  if constexpr (T == 2) _tile_stored(2, p, stride);
  if constexpr (T == 3) _tile_stored(3, p, stride);
}

// C tile T of `rows` x `cols` outputs at d: zero (the first chunk of K) or the sums so far.
template <int T>
[[gnu::always_inline]] inline void c_load(float* d, size_t stride, size_t rows, size_t cols, bool zero, float* tmp) {
  if (zero) {
    tile_zero<T>();
    return;
  }
  compiler_barrier();  // (the vector stores of the previous chunk's edge tiles)
  if (rows == kTile && cols == kTile) {
    tile_load<T>(d, stride);
    return;
  }
  const __mmask16 mask = static_cast<__mmask16>((1u << cols) - 1u);
  for (size_t r = 0; r < kTile; ++r)
    _mm512_store_ps(tmp + kTile * r, r < rows ? _mm512_maskz_loadu_ps(mask, row_ptr(d, stride, r)) : _mm512_setzero_ps());
  compiler_barrier();
  tile_load<T>(tmp, 64);
}

// C tile T back to d; clamped (NaN kept: min(hi, max(lo, v))) after the last chunk.
template <int T>
[[gnu::always_inline]] inline void c_store(float* d, size_t stride, size_t rows, size_t cols, bool clamp, __m512 lo,
                                           __m512 hi, float* tmp) {
  if (!clamp && rows == kTile && cols == kTile) {
    tile_store<T>(d, stride);
    return;
  }
  tile_store<T>(tmp, 64);
  compiler_barrier();
  const __mmask16 mask = static_cast<__mmask16>((1u << cols) - 1u);
  for (size_t r = 0; r < rows; ++r) {
    __m512 v = _mm512_load_ps(tmp + kTile * r);
    if (clamp) v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
    _mm512_mask_storeu_ps(row_ptr(d, stride, r), mask, v);
  }
}

struct Step {
  const uint8_t* a0;  // the row tiles' LHS panels
  const uint8_t* bt0;
  const uint8_t* bt1;  // the column tiles' B tiles of the chunk
  size_t c0, c1;       // the chunk's 32-blocks
  float* d;            // dst at (i0, j0)
  size_t stride, rows, cols, lhs_panel;  // rows, cols: of the whole 32 x 32 step (1..32)
  size_t rows_after;                     // rows of the next step below (0..32)
  bool first, clamp;
  __m512 lo, hi;
  float* tmp;
};

// One 32 x 32 (or smaller: kR2 / kC2 false) step over a chunk of K.
template <bool kR2, bool kC2>
[[gnu::always_inline]] inline void step(const Step& s) {
  const size_t r0 = s.rows < kTile ? s.rows : kTile, r1 = kR2 ? s.rows - kTile : 0;
  const size_t n0 = s.cols < kTile ? s.cols : kTile, n1 = kC2 ? s.cols - kTile : 0;
  float* d1 = kR2 ? row_ptr(s.d, s.stride, kTile) : nullptr;
  c_load<0>(s.d, s.stride, r0, n0, s.first, s.tmp);
  if constexpr (kC2) c_load<1>(s.d + kTile, s.stride, r0, n1, s.first, s.tmp);
  if constexpr (kR2) c_load<2>(d1, s.stride, r1, n0, s.first, s.tmp);
  if constexpr (kR2 && kC2) c_load<3>(d1 + kTile, s.stride, r1, n1, s.first, s.tmp);
  const uint8_t* a1 = s.a0 + s.lhs_panel;
  if (!s.first && s.rows_after > 0) {  // the next step's sums (rows below), into L2 meanwhile
    float* next = row_ptr(s.d, s.stride, 2 * kTile);
    for (size_t r = 0; r < s.rows_after; ++r) {
      _mm_prefetch(reinterpret_cast<const char*>(row_ptr(next, s.stride, r)), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(row_ptr(next, s.stride, r) + kTile), _MM_HINT_T1);
    }
  }
  for (size_t b = s.c0; b < s.c1; ++b) {
    const size_t t = (b - s.c0) * kTileBytes;
    _tile_loadd(4, s.a0 + b * kTileBytes, 64);
    _tile_loadd(6, s.bt0 + t, 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (kC2) {
      _tile_loadd(7, s.bt1 + t, 64);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (kR2) {
      _tile_loadd(5, a1 + b * kTileBytes, 64);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (kC2) _tile_dpbf16ps(3, 5, 7);
    }
  }
  c_store<0>(s.d, s.stride, r0, n0, s.clamp, s.lo, s.hi, s.tmp);
  if constexpr (kC2) c_store<1>(s.d + kTile, s.stride, r0, n1, s.clamp, s.lo, s.hi, s.tmp);
  if constexpr (kR2) c_store<2>(d1, s.stride, r1, n0, s.clamp, s.lo, s.hi, s.tmp);
  if constexpr (kR2 && kC2) c_store<3>(d1 + kTile, s.stride, r1, n1, s.clamp, s.lo, s.hi, s.tmp);
}

// K goes in chunks of kChunk 32-blocks: the B tiles of 32 columns and a chunk (2 x 32 KiB,
// in L2) are made once and serve every row tile of the call.
constexpr size_t kChunk = 32;

template <class W>
void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  const size_t blocks = k / kBlock;
  const size_t lhs_panel = bf16p::panel_bytes(kTile, k), rhs_panel = W::panel_bytes(k);
  const auto* lp = static_cast<const uint8_t*>(lhs);
  const auto* rp = static_cast<const uint8_t*>(rhs);
  const bool clamp = !(lo == -INFINITY && hi == INFINITY);  // an open clamp changes no bits
  alignas(64) uint8_t bt[2][kChunk * kTileBytes];
  alignas(64) float tmp[kTile * kTile];
  const Makers mk;
  configure_tiles();
  Step s{};
  s.stride = stride, s.lhs_panel = lhs_panel, s.lo = _mm512_set1_ps(lo), s.hi = _mm512_set1_ps(hi), s.tmp = tmp;
  s.bt0 = bt[0], s.bt1 = bt[1];
  for (size_t c0 = 0; c0 < blocks; c0 += kChunk) {
    const size_t c1 = blocks - c0 < kChunk ? blocks : c0 + kChunk;
    for (size_t j0 = 0; j0 < n; j0 += 2 * kTile) {
      s.cols = n - j0 < 2 * kTile ? n - j0 : 2 * kTile;
      const uint8_t* rp0 = rp + j0 / kTile * rhs_panel;
      for (size_t b = c0; b < c1; ++b) {
        W::tile(rp0, b, bt[0] + (b - c0) * kTileBytes, mk);
        if (s.cols > kTile) W::tile(rp0 + rhs_panel, b, bt[1] + (b - c0) * kTileBytes, mk);
      }
      compiler_barrier();
      s.c0 = c0, s.c1 = c1, s.first = c0 == 0, s.clamp = clamp && c1 == blocks;
      for (size_t i0 = 0; i0 < m; i0 += 2 * kTile) {
        s.rows = m - i0 < 2 * kTile ? m - i0 : 2 * kTile;
        s.rows_after = m - i0 - s.rows < 2 * kTile ? m - i0 - s.rows : 2 * kTile;
        s.a0 = lp + i0 / kTile * lhs_panel;
        s.d = row_ptr(dst, stride, i0) + j0;
        const bool r2 = s.rows > kTile, c2 = s.cols > kTile;
        if (r2 && c2) {
          step<true, true>(s);
        } else if (r2) {
          step<true, false>(s);
        } else if (c2) {
          step<false, true>(s);
        } else {
          step<false, false>(s);
        }
      }
    }
  }
  _tile_release();
}

TileParams q4_params(size_t) { return {kTile, kTile, 4, 2, kTile, kTile}; }
TileParams q8_params(size_t) { return {kTile, kTile, 4, 1, kTile, kTile}; }

}  // namespace

const Ukernel matmul_clamp_f32_bf16p16x32_qau4c32p16x4_16x16_amxbf16_tdpbf16ps = {
    "matmul_clamp_f32_bf16p16x32_qau4c32p16x4_16x16_amxbf16_tdpbf16ps", Isa::amxbf16, WeightType::q4_0, false, q4_params,
    &lhs_quant_pack_bf16p16x32_f32_avx512, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemm<Q4>,
    &matmul_clamp_f32_bf16p16x32_qau4c32p16x4_16x16_scalar};
const Ukernel matmul_clamp_f32_bf16p16x32_qau8c32p16x4_16x16_amxbf16_tdpbf16ps = {
    "matmul_clamp_f32_bf16p16x32_qau8c32p16x4_16x16_amxbf16_tdpbf16ps", Isa::amxbf16, WeightType::q8_0, false, q8_params,
    &lhs_quant_pack_bf16p16x32_f32_avx512, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemm<Q8>,
    &matmul_clamp_f32_bf16p16x32_qau8c32p16x4_16x16_scalar};
const Ukernel matmul_clamp_f32_bf16p16x32_q4kp16x4_16x16_amxbf16_tdpbf16ps = {
    "matmul_clamp_f32_bf16p16x32_q4kp16x4_16x16_amxbf16_tdpbf16ps", Isa::amxbf16, WeightType::q4_k, false, q4_params,
    &lhs_quant_pack_bf16p16x32_f32_avx512, &rhs_pack_nxk_q4kp_q4k, gemm<Q4K>, &matmul_clamp_f32_bf16p16x32_q4kp16x4_16x16_scalar};
const Ukernel matmul_clamp_f32_bf16p16x32_q6kp16x4_16x16_amxbf16_tdpbf16ps = {
    "matmul_clamp_f32_bf16p16x32_q6kp16x4_16x16_amxbf16_tdpbf16ps", Isa::amxbf16, WeightType::q6_k, false, q4_params,
    &lhs_quant_pack_bf16p16x32_f32_avx512, &rhs_pack_nxk_q6kp_q6k, gemm<Q6K>, &matmul_clamp_f32_bf16p16x32_q6kp16x4_16x16_scalar};
const Ukernel matmul_clamp_f32_bf16p16x32_iq4nlp16x4_16x16_amxbf16_tdpbf16ps = {
    "matmul_clamp_f32_bf16p16x32_iq4nlp16x4_16x16_amxbf16_tdpbf16ps", Isa::amxbf16, WeightType::iq4_nl, false, q4_params,
    &lhs_quant_pack_bf16p16x32_f32_avx512, &rhs_pack_nxk_iq4nlp_iq4nl, gemm<Iq4nl>,
    &matmul_clamp_f32_bf16p16x32_iq4nlp16x4_16x16_scalar};

}  // namespace qmm
