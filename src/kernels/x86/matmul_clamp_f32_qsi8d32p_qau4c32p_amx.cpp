#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_amx.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/ref/rhs_pack_nxk_kquants.h"
#include "kernels/x86/avx512_util.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"
#include "kernels/x86/rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0.h"
#include "kernels/x86/rhs_pack_nxk_qau8c32pscalef16_qsi8c32.h"
#include "kernels/x86/x86_kblocks.h"

namespace qmm {
namespace {

constexpr size_t kTile = 16;                                // output rows and columns of a tile
constexpr size_t kLhsBlock = kTile * x86lhs::kBlockBytes;   // A tile (512 bytes), 16 f32 scales, 16 sums

// GCC's tile loads are asm statements that do not tell the compiler they read memory (its
// tile stores do): a barrier keeps the vector stores that build a B tile before its load.
inline void compiler_barrier() { __asm__ volatile("" ::: "memory"); }

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// One product per 32-block (kProducts 1): tiles 0, 1 are the int32 sums (16 x 16) of two blocks
// in flight; 2, 3 their A tiles (16 rows x 32 int8 of activations); 4, 5 their B tiles (8 K
// chunks x 16 columns x 4 int8 of weights). Two (kProducts 2, Q6_K: a low and a high byte):
// tiles 0, 1 and 2, 3 the two products' sums of two blocks in flight; 4, 5 the blocks' A
// tiles; 6, 7 the low- and high-byte B tiles.
template <size_t kProducts>
void configure_tiles() {
  TileConfig c;
  if constexpr (kProducts == 1) {
    for (int t : {0, 1}) c.rows[t] = 16, c.colsb[t] = 64;
    for (int t : {2, 3}) c.rows[t] = 16, c.colsb[t] = 32;
    for (int t : {4, 5}) c.rows[t] = 8, c.colsb[t] = 64;
  } else {
    for (int t : {0, 1, 2, 3}) c.rows[t] = 16, c.colsb[t] = 64;
    for (int t : {4, 5}) c.rows[t] = 16, c.colsb[t] = 32;
    for (int t : {6, 7}) c.rows[t] = 8, c.colsb[t] = 64;
  }
  compiler_barrier();
  _tile_loadconfig(&c);
}

using V = avx512::Zmm;

// A weight type K supplies, per step of kSub 32-blocks (kRhsStep bytes of a 16-column panel):
//   b_tiles(w, bt, f)   the step's B tiles (8 rows x 64 bytes each) at bt, kBBytes per 32-block,
//                    and where kScales (Q4_K, Q5_K) the per-column F32 scale vectors of each
//                    32-block at f, 32 floats apart (made once per column panel and chunk of K,
//                    as the B tiles, not once per row tile: the same operations, the same bits);
//   kUnsignedB       whether they hold unsigned levels (tdpbsud) or signed weights (tdpbssd);
//   kProducts        tile products per 32-block: 1, or 2 (Q6_K: two B tiles, one A tile);
//   kBBytes          bytes of B tiles per 32-block (512, or 1024 for two);
//   epilogue(sums, rp, b, a, f, acc, out)   32-block b's int32 sums (kProducts x 16 x 16) into
//                    acc, its LHS block a, its F32 scales f; out (16 x 16 F32) only for a K
//                    with kOut (Q6_K: acc holds a super-block's sum, added to out at its end).

// acc[r] += float(Σ[r]) · (s_w · s_a[r]): avx512::Zmm::add_scaled, as the VNNI kernels.
[[gnu::always_inline]] inline void scale_rows(const int32_t* sums, V::F sw, const uint8_t* a, __m512 acc[kTile]) {
  for (size_t r = 0; r < kTile; ++r)
    acc[r] = V::add_scaled(acc[r], _mm512_load_si512(sums + kTile * r), sw, V::broadcast_f32(a + 32 * kTile + 4 * r));
}

// Q4_0 (qau4c32p, nr 16): a block is 4 zmm of nibbles (column n's 32-bit lane of zmm v holds K
// chunk v in its low and chunk v + 4 in its high nibbles, u = w + 8), then 16 f16 scales.
struct Q4 {
  static constexpr size_t kSub = 1, kRhsStep = kTile * 18, kProducts = 1;
  static constexpr bool kUnsignedB = false, kOut = false, kScales = false;
  static constexpr size_t kBBytes = 512;
  static void b_tiles(const uint8_t* w, uint8_t* b, float*) {
    const __m512i m4 = _mm512_set1_epi8(0x0f), eight = _mm512_set1_epi8(8);
    for (size_t v = 0; v < 4; ++v) {
      const __m512i x = _mm512_loadu_si512(w + 64 * v);
      _mm512_store_si512(b + 64 * v, _mm512_sub_epi8(_mm512_and_si512(x, m4), eight));
      _mm512_store_si512(b + 64 * (v + 4), _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(x, 4), m4), eight));
    }
  }
  static void epilogue(const int32_t* sums, const uint8_t* rp, size_t b, const uint8_t* a, const float*, __m512 acc[kTile],
                       float*) {
    scale_rows(sums, V::load_f16(rp + b * kRhsStep + 16 * kTile), a, acc);
  }
};

// Q8_0 (qau8c32p, nr 16): a block is 8 zmm, K chunk v in zmm v (u = w + 128), then 16 f16 scales.
struct Q8 {
  static constexpr size_t kSub = 1, kRhsStep = kTile * 34, kProducts = 1;
  static constexpr bool kUnsignedB = false, kOut = false, kScales = false;
  static constexpr size_t kBBytes = 512;
  static void b_tiles(const uint8_t* w, uint8_t* b, float*) {
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
    for (size_t v = 0; v < 8; ++v) _mm512_store_si512(b + 64 * v, _mm512_xor_si512(_mm512_loadu_si512(w + 64 * v), bias));
  }
  static void epilogue(const int32_t* sums, const uint8_t* rp, size_t b, const uint8_t* a, const float*, __m512 acc[kTile],
                       float*) {
    scale_rows(sums, V::load_f16(rp + b * kRhsStep + 32 * kTile), a, acc);
  }
};

// The F32 scale vectors of a Q4_K / Q5_K super-block at w into f (32 floats per sub-block j):
// sc = d·sc_j and mn = dmin/8·m_j, as VnniQ4K::finish, the scale and min bytes of sub-block j
// at kScales·16 + 32·j, d and dmin (f16 x 16 each) at kD·16.
template <size_t kScales, size_t kD>
inline void min_scales(const uint8_t* w, float* f) {
  const V::F d = V::load_f16(w + kD * kTile), dmin8 = V::mul(V::load_f16(w + (kD + 2) * kTile), V::set1(0.125f));
  for (size_t j = 0; j < 8; ++j) {
    const uint8_t* sm = w + kScales * kTile + 2 * kTile * j;
    _mm512_store_ps(f + 32 * j, V::mul(V::load_u8_f32(sm), d));
    _mm512_store_ps(f + 32 * j + kTile, V::mul(V::load_u8_f32(sm + kTile), dmin8));
  }
}

// A Q4_K / Q5_K sub-block's int32 sums into acc as VnniQ4K::finish, its scales f (min_scales):
// acc += Σ·(sc·s_a) + mn·(s_a·(−8·Σa)).
[[gnu::always_inline]] inline void min_epilogue(const int32_t* sums, const float* f, const uint8_t* a, __m512 acc[kTile]) {
  const V::F sc = _mm512_load_ps(f), mn = _mm512_load_ps(f + kTile);
  alignas(64) float nb[kTile];  // s_a·(−8·Σa) per row, as x86q::min_factors
  const __m512i pairs = _mm512_loadu_si512(a + 36 * kTile);
  _mm512_store_ps(nb, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_madd_epi16(pairs, _mm512_set1_epi16(1))),
                                    _mm512_loadu_ps(a + 32 * kTile)));
  for (size_t r = 0; r < kTile; ++r) {
    const V::F summed = V::add_scaled(acc[r], _mm512_load_si512(sums + kTile * r), sc, V::broadcast_f32(a + 32 * kTile + 4 * r));
    acc[r] = V::fmadd(mn, _mm512_set1_ps(nb[r]), summed);
  }
}

// Q4_K (q4kp, nr 16, x86_qloops.h's VnniQ4K): a super-block is 4 groups of 8 zmm (K chunk v of
// sub-blocks 2p and 2p + 1 in the low and high nibbles of zmm v of group p: the levels 0..15,
// unsigned), then per sub-block 16 scale and 16 min bytes, then d and dmin (f16 x 16 each).
struct Q4K {
  static constexpr size_t kSub = 8, kRhsStep = kTile * 148, kProducts = 1;
  static constexpr bool kUnsignedB = true, kOut = false, kScales = true;
  static constexpr size_t kBBytes = 512;
  static void b_tiles(const uint8_t* w, uint8_t* b, float* f) {
    min_scales<128, 144>(w, f);
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    for (size_t p = 0; p < 4; ++p) {
      for (size_t v = 0; v < 8; ++v) {
        const __m512i x = _mm512_loadu_si512(w + 32 * kTile * p + 64 * v);
        _mm512_store_si512(b + 512 * (2 * p) + 64 * v, _mm512_and_si512(x, m4));
        _mm512_store_si512(b + 512 * (2 * p + 1) + 64 * v, _mm512_and_si512(_mm512_srli_epi16(x, 4), m4));
      }
    }
  }
  static void epilogue(const int32_t* sums, const uint8_t*, size_t, const uint8_t* a, const float* f, __m512 acc[kTile],
                       float*) {
    min_epilogue(sums, f, a, acc);
  }
};

// Q5_K (q5kp, nr 16, x86_kblocks.h's Q5K): Q4_K's nibble groups, then the fifth bits (qh, 8
// zmm: bit 2p / 2p + 1 of zmm v for sub-blocks 2p / 2p + 1), then Q4_K's scales 32·16 bytes
// further on. The B tiles hold the levels 0..31 (x86q::q5k_levels), unsigned.
struct Q5K {
  static constexpr size_t kSub = 8, kRhsStep = kTile * 180, kProducts = 1;
  static constexpr bool kUnsignedB = true, kOut = false, kScales = true;
  static constexpr size_t kBBytes = 512;
  template <int P>
  static void pair_tiles(const uint8_t* w, uint8_t* b) {
    for (size_t v = 0; v < 8; ++v) {
      __m512i lo, hi;
      x86q::q5k_levels<V, P>(w, v, lo, hi);
      _mm512_store_si512(b + 512 * (2 * P) + 64 * v, lo);
      _mm512_store_si512(b + 512 * (2 * P + 1) + 64 * v, hi);
    }
  }
  static void b_tiles(const uint8_t* w, uint8_t* b, float* f) {
    min_scales<160, 176>(w, f);
    pair_tiles<0>(w, b);
    pair_tiles<1>(w, b);
    pair_tiles<2>(w, b);
    pair_tiles<3>(w, b);
  }
  static void epilogue(const int32_t* sums, const uint8_t*, size_t, const uint8_t* a, const float* f, __m512 acc[kTile],
                       float*) {
    min_epilogue(sums, f, a, acc);
  }
};

// Q6_K (q6kp, nr 16, x86_kblocks.h's VnniQ6K): a scale sc per 16 weights, so the B tiles
// carry it: p = (u − 32)·sc, each 16-bit (|p| <= 4096), split into its low byte (unsigned,
// tdpbsud) and high byte (signed, tdpbssd), two 8 x 64-byte B tiles per 32-block (kBBytes
// 1024). Then 256·Σ_hi + Σ_lo = Σ₀·sc₀ + Σ₁·sc₁ over the block's two halves, exactly the
// integer VnniQ6K's F32 `sum` holds (exact: below 2^24), so per row it remains t += float(Σ)·s_a
// (t: acc here) and out += t·d at the super-block's end, VnniQ6K's order: 4 instructions per
// row and block instead of 5 with a K = 16 tile product per half (the first version: 4–8 %
// slower at m 128–512, the same bits).
struct Q6K {
  static constexpr size_t kSub = 8, kRhsStep = kTile * 210, kProducts = 2, kBBytes = 1024;
  static constexpr bool kOut = true, kScales = false;  // its two products pick their own signedness
  // 32-block j = 4h + T: chunk vectors v (16 columns x 4 K) of levels − 32, times the scale of
  // half v / 4 as int16 (sca / scb[H]: column c's in lanes 4c..4c+3 of the low / high 32 bytes,
  // c < 8 / c >= 8), each 16-bit product's bytes then split into the two tiles.
  template <size_t T>
  static void block_tiles(const uint8_t* w, size_t h, uint8_t* b) {
    const size_t j = 4 * h + T;
    const __m512i lane_col = _mm512_set_epi16(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2,
                                              1, 1, 1, 1, 0, 0, 0, 0);
    const __m512i eight = _mm512_set1_epi16(8);
    // bytes of each 128-bit lane's 8 int16: the low bytes first, then the high bytes
    const __m512i split = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    const __m512i lo_q = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), hi_q = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    __m512i sca[2], scb[2];
    for (size_t H = 0; H < 2; ++H) {
      const __m512i sc = _mm512_castsi256_si512(
          _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + (192 + 2 * j + H) * kTile))));
      sca[H] = _mm512_permutexvar_epi16(lane_col, sc);
      scb[H] = _mm512_permutexvar_epi16(_mm512_add_epi16(lane_col, eight), sc);
    }
    const __m512i bias = _mm512_set1_epi8(32);
    for (size_t v = 0; v < 8; ++v) {
      const __m512i x = _mm512_sub_epi8(x86q::q6k_levels<V, T>(w, h, v), bias);
      const __m512i pa = _mm512_shuffle_epi8(
          _mm512_mullo_epi16(_mm512_cvtepi8_epi16(_mm512_castsi512_si256(x)), sca[v / 4]), split);
      const __m512i pb = _mm512_shuffle_epi8(
          _mm512_mullo_epi16(_mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(x, 1)), scb[v / 4]), split);
      _mm512_store_si512(b + 64 * v, _mm512_permutex2var_epi64(pa, lo_q, pb));
      _mm512_store_si512(b + 512 + 64 * v, _mm512_permutex2var_epi64(pa, hi_q, pb));
    }
  }
  static void b_tiles(const uint8_t* w, uint8_t* b, float*) {
    for (size_t h = 0; h < 2; ++h) {
      block_tiles<0>(w, h, b + kBBytes * (4 * h));
      block_tiles<1>(w, h, b + kBBytes * (4 * h + 1));
      block_tiles<2>(w, h, b + kBBytes * (4 * h + 2));
      block_tiles<3>(w, h, b + kBBytes * (4 * h + 3));
    }
  }
  static void epilogue(const int32_t* sums, const uint8_t* rp, size_t b, const uint8_t* a, const float*,
                       __m512 acc[kTile], float* out) {
    for (size_t r = 0; r < kTile; ++r) {
      const __m512i hi = _mm512_slli_epi32(_mm512_load_si512(sums + kTile * (kTile + r)), 8);
      const V::F x = V::to_f32(_mm512_add_epi32(hi, _mm512_load_si512(sums + kTile * r)));
      acc[r] = V::fmadd(x, V::broadcast_f32(a + 32 * kTile + 4 * r), acc[r]);
    }
    if (b % kSub + 1 < kSub) return;
    const V::F d = V::load_f16(rp + b / kSub * kRhsStep + 208 * kTile);
    for (size_t r = 0; r < kTile; ++r) {
      _mm512_store_ps(out + kTile * r, V::fmadd(acc[r], d, _mm512_load_ps(out + kTile * r)));
      acc[r] = V::zero();
    }
  }
};

// Blocks [b0, b1) of one 16 x 16 tile into acc, their B tiles ready in bt (K::kBBytes each,
// from block b0 on). Software-pipelined over two sets of C tiles: block b + 1's tile products
// are issued before block b's sums are stored, and a block's sums are scaled only after the
// next block's are stored, so the tile unit, the tile stores and the epilogue overlap.
// Tile numbers are immediates, hence one lambda per set of C tiles.
template <class K>
[[gnu::always_inline]] inline void tile_blocks(size_t b0, size_t b1, const uint8_t* lp, const uint8_t* rp,
                                               const uint8_t* bt, const float* ft, __m512 acc[kTile], float* out) {
  constexpr size_t kSums = kTile * kTile * K::kProducts;
  alignas(64) int32_t s0[kSums], s1[kSums];
  auto a = [&](size_t b) { return lp + b * kLhsBlock; };
  auto w = [&](size_t b) { return bt + (b - b0) * K::kBBytes; };
  auto issue0 = [&](size_t b) {
    if constexpr (K::kProducts == 2) {
      _tile_zero(0); _tile_zero(1);
      _tile_loadd(4, a(b), 32); _tile_loadd(6, w(b), 64); _tile_dpbsud(0, 4, 6);
      _tile_loadd(7, w(b) + 512, 64); _tile_dpbssd(1, 4, 7);
    } else {
      _tile_zero(0); _tile_loadd(2, a(b), 32); _tile_loadd(4, w(b), 64);
      if constexpr (K::kUnsignedB) _tile_dpbsud(0, 2, 4); else _tile_dpbssd(0, 2, 4);
    }
  };
  auto issue1 = [&](size_t b) {
    if constexpr (K::kProducts == 2) {
      _tile_zero(2); _tile_zero(3);
      _tile_loadd(5, a(b), 32); _tile_loadd(6, w(b), 64); _tile_dpbsud(2, 5, 6);
      _tile_loadd(7, w(b) + 512, 64); _tile_dpbssd(3, 5, 7);
    } else {
      _tile_zero(1); _tile_loadd(3, a(b), 32); _tile_loadd(5, w(b), 64);
      if constexpr (K::kUnsignedB) _tile_dpbsud(1, 3, 5); else _tile_dpbssd(1, 3, 5);
    }
  };
  auto store0 = [&] {
    if constexpr (K::kProducts == 2) { _tile_stored(0, s0, 64); _tile_stored(1, s0 + kTile * kTile, 64); }
    else _tile_stored(0, s0, 64);
  };
  auto store1 = [&] {
    if constexpr (K::kProducts == 2) { _tile_stored(2, s1, 64); _tile_stored(3, s1 + kTile * kTile, 64); }
    else _tile_stored(1, s1, 64);
  };
  auto scale = [&](size_t b, const int32_t* s) {
    K::epilogue(s, rp, b, a(b), K::kScales ? ft + (b - b0) * 2 * kTile : ft, acc, out);
  };
  issue0(b0);
  for (size_t b = b0; b < b1; b += 2) {
    const bool pair = b + 1 < b1;
    if (pair) issue1(b + 1);
    store0();
    if (b > b0) scale(b - 1, s1);
    if (b + 2 < b1) issue0(b + 2);
    if (pair) store1();
    scale(b, s0);
  }
  if ((b1 - b0) % 2 == 0) scale(b1 - 1, s1);
}

// K goes in chunks of kChunk<K> blocks: a column panel's B tiles of a chunk are made once (16 KiB,
// in L1) and serve every row tile; the row tiles' sums wait in dst between chunks (F32 stored
// and reloaded exactly: the same bits as one pass), clamped after the last chunk.
template <class K>
constexpr size_t kChunk = 16384 / K::kBBytes;  // 32 or 16 blocks, a multiple of K::kSub (32 KiB of Q6_K B tiles: slower)

template <class K>
void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo, float hi) {
  const size_t blocks = k / kBlock;
  const size_t lhs_panel = x86lhs::panel_bytes(kTile, k), rhs_panel = blocks / K::kSub * K::kRhsStep;
  const auto* lp = static_cast<const uint8_t*>(lhs);
  const auto* rp = static_cast<const uint8_t*>(rhs);
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __m512 none_lo = _mm512_set1_ps(-INFINITY), none_hi = _mm512_set1_ps(INFINITY);
  constexpr size_t chunk = kChunk<K>;
  alignas(64) uint8_t bt[chunk * K::kBBytes];
  alignas(64) float ft[K::kScales ? chunk * 2 * kTile : 1];  // (a 4 KiB array made Q6_K 4 % slower)
  configure_tiles<K::kProducts>();
  for (size_t j0 = 0; j0 < n; j0 += kTile) {
    const size_t cols = n - j0 < kTile ? n - j0 : kTile;
    const __mmask16 mask = static_cast<__mmask16>((1u << cols) - 1u);
    const uint8_t* rpj = rp + j0 / kTile * rhs_panel;
    for (size_t c0 = 0; c0 < blocks; c0 += chunk) {
      const size_t c1 = blocks - c0 < chunk ? blocks : c0 + chunk;
      for (size_t b = c0; b < c1; b += K::kSub)
        K::b_tiles(rpj + b / K::kSub * K::kRhsStep, bt + (b - c0) * K::kBBytes, K::kScales ? ft + (b - c0) * 2 * kTile : ft);
      compiler_barrier();
      const bool last = c1 == blocks;
      for (size_t i0 = 0; i0 < m; i0 += kTile) {
        const size_t rows = m - i0 < kTile ? m - i0 : kTile;
        __m512 acc[kTile];
        alignas(64) float out[K::kOut ? kTile * kTile : 1];  // kOut: the sums, acc the super-block's
        for (size_t r = 0; r < kTile; ++r) {
          const __m512 v = c0 == 0 || r >= rows ? _mm512_setzero_ps()
                                                : _mm512_maskz_loadu_ps(mask, avx512::row_ptr(dst, stride, i0 + r) + j0);
          if constexpr (K::kOut) _mm512_store_ps(out + kTile * r, v);
          acc[r] = K::kOut ? _mm512_setzero_ps() : v;
        }
        tile_blocks<K>(c0, c1, lp + i0 / kTile * lhs_panel, rpj, bt, ft, acc, out);
        for (size_t r = 0; r < rows; ++r) {
          if constexpr (K::kOut) acc[r] = _mm512_load_ps(out + kTile * r);
          avx512::store_clamped(avx512::row_ptr(dst, stride, i0 + r) + j0, acc[r], cols, last ? vlo : none_lo,
                                last ? vhi : none_hi);
        }
      }
    }
  }
  _tile_release();
}

TileParams q4_params(size_t) { return {kTile, kTile, 4, 2, kTile, kTile}; }
TileParams q8_params(size_t) { return {kTile, kTile, 4, 1, kTile, kTile}; }
TileParams q4k_params(size_t) { return {kTile, kTile, 4, 2, kTile, kTile}; }  // Q5_K and Q6_K too

}  // namespace

const Ukernel matmul_clamp_f32_qsi8d32p16x32_qau4c32p16x4_16x16_amx_tdpbssd = {
    "matmul_clamp_f32_qsi8d32p16x32_qau4c32p16x4_16x16_amx_tdpbssd", Isa::amx, WeightType::q4_0, false, q4_params,
    &lhs_quant_pack_qsi8d32pscalef32sumrows_f32_avx2, &rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0, gemm<Q4>};
const Ukernel matmul_clamp_f32_qsi8d32p16x32_qau8c32p16x4_16x16_amx_tdpbssd = {
    "matmul_clamp_f32_qsi8d32p16x32_qau8c32p16x4_16x16_amx_tdpbssd", Isa::amx, WeightType::q8_0, false, q8_params,
    &lhs_quant_pack_qsi8d32pscalef32sumrows_f32_avx2, &rhs_pack_nxk_qau8c32pscalef16_qsi8c32, gemm<Q8>};
const Ukernel matmul_clamp_f32_qsi8d32p16x32_q4kp16x4_16x16_amx_tdpbsud = {
    "matmul_clamp_f32_qsi8d32p16x32_q4kp16x4_16x16_amx_tdpbsud", Isa::amx, WeightType::q4_k, false, q4k_params,
    &lhs_quant_pack_qsi8d32pscalef32sumrows_f32_avx2, &rhs_pack_nxk_q4kp_q4k, gemm<Q4K>};
const Ukernel matmul_clamp_f32_qsi8d32p16x32_q6kp16x4_16x16_amx_tdpbssd = {
    "matmul_clamp_f32_qsi8d32p16x32_q6kp16x4_16x16_amx_tdpbssd", Isa::amx, WeightType::q6_k, false, q4k_params,
    &lhs_quant_pack_qsi8d32pscalef32sumrows_f32_avx2, &rhs_pack_nxk_q6kp_q6k, gemm<Q6K>};
const Ukernel matmul_clamp_f32_qsi8d32p16x32_q5kp16x4_16x16_amx_tdpbsud = {
    "matmul_clamp_f32_qsi8d32p16x32_q5kp16x4_16x16_amx_tdpbsud", Isa::amx, WeightType::q5_k, false, q4k_params,
    &lhs_quant_pack_qsi8d32pscalef32sumrows_f32_avx2, &rhs_pack_nxk_q5kp_q5k, gemm<Q5K>};

}  // namespace qmm
