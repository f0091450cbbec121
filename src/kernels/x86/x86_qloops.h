// The tile loops (GEMM and GEMV) and VNNI block dot products of the x86 block-quantized kernels
// (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_NL weights), written once over a vector type V that
// supplies the instructions:
//   avx2::Ymm (avx2_util.h), avxvnni::Ymm (avxvnni_util.h: + vpdpbusd ymm),
//   avx512::Zmm (avx512_util.h, with vpdpbusd zmm), avx512::Ymm16 (ymm over Zmm's panels: GEMV).
// A kernel supplies a block type K with kRhsBlock (bytes per block of a kPanel<V>-column RHS
// panel), kScaleOffset (where in it the f16 scales start) and
//   template <size_t R, size_t C, size_t RL = R>
//   static void dot(const uint8_t* w, size_t stride, const uint8_t* a, typename V::I s[C][R]):
// the int32 sums of the first R rows of an RL-row LHS block a (x86 layout) over block w of C
// panels `stride` bytes apart, zero point included; each activation broadcast serves the C panels.
// A K-quant kernel's K instead covers a super-block of kStepBlocks 32-blocks per step (kRhsBlock
// bytes per step and panel) and supplies
//   template <size_t R, size_t C, size_t RL = R>
//   static void step(const uint8_t* w, size_t stride, const uint8_t* a, typename V::F acc[C][R]):
// it adds the step's F32 contribution itself (its scales are more than one f16 per block).
// Internal linkage: files built for different ISAs include this (each gets its own copy).
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/blocks.h"
#include "kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.h"

namespace qmm::x86q {
namespace {

// The packed layout a vector type reads: panels of kPanel<V> columns (V::kPanel where V says,
// else V::kLanes), each column one 32-bit lane per 4-byte chunk and one f16 / byte lane per
// scale. A V narrower than its layout (avx512::Ymm16: ymm over the 16-column zmm panels)
// splits each panel into kSplit<V> sub-panels of V::kLanes columns, and the blocks' column
// index c counts sub-panels: sub-panel c is panel c / kSplit of the tile, lanes
// (c % kSplit)·kLanes on, so a section with B bytes per lane starts B·kLanes bytes further in.
template <class V>
constexpr size_t panel_lanes() {
  if constexpr (requires { V::kPanel; }) {
    return V::kPanel;
  } else {
    return V::kLanes;
  }
}
template <class V>
constexpr size_t kPanel = panel_lanes<V>();
template <class V>
constexpr size_t kSplit = kPanel<V> / V::kLanes;

// Section offset `off` (bytes, in the kPanel-column layout) of sub-panel c of the panels at w,
// `stride` bytes apart, for a section of B bytes per lane.
template <class V, size_t B>
inline const uint8_t* at(const uint8_t* w, size_t stride, size_t c, size_t off) {
  return w + c / kSplit<V> * stride + off + c % kSplit<V> * V::kLanes * B;
}

// Prefetches the `bytes` bytes at p, a line at a time, into L2 (or, with hint _MM_HINT_T0, L1).
template <size_t bytes, int hint = _MM_HINT_T1>
inline void prefetch_lines(const uint8_t* p) {
  for (size_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), static_cast<decltype(_MM_HINT_T1)>(hint));
}

// Part `part` of `parts` of the lines of the `bytes` bytes at p, prefetched into L2 (or, with
// hint _MM_HINT_T0, L1): a step kernel that prefetches itself (below) spreads a super-block's
// lines over its sub-blocks.
// Every part is the same number of lines, so the last one may run up to parts - 1 lines past
// the block (a prefetch never faults): with a run-time `part`, a bounds test per line made
// this loop 40 % of the Q4_K GEMV's instructions; a constant count unrolls to one prefetch
// per line.
template <size_t bytes, size_t parts, int hint = _MM_HINT_T1>
inline void prefetch_part(const uint8_t* p, size_t part) {
  constexpr size_t lines = (bytes + 63) / 64, per_part = (lines + parts - 1) / parts;
  const uint8_t* q = p + 64 * per_part * part;
#pragma GCC unroll 16
  for (size_t l = 0; l < per_part; ++l) _mm_prefetch(reinterpret_cast<const char*>(q + 64 * l), static_cast<decltype(_MM_HINT_T1)>(hint));
}

// A step kernel K may take the prefetch distance itself (kPrefetchesInStep: its step has a
// trailing `size_t pf` and prefetches its own lines at +pf, spread over the step): a burst of
// ~100 prefetches ahead of a whole super-block stalled the Q6_K GEMV (0.88 vs 0.66 ms for
// 4096 x 4096 cache-hot without any).
template <class K>
constexpr bool prefetches_in_step() {
  if constexpr (requires { K::kPrefetchesInStep; }) {
    return K::kPrefetchesInStep;
  } else {
    return false;
  }
}

// 32-blocks per step of K (1 unless K is a super-block type).
template <class K>
constexpr size_t step_blocks() {
  if constexpr (requires { K::kStepBlocks; }) {
    return K::kStepBlocks;
  } else {
    return 1;
  }
}

// One step (block or super-block) of R rows (of an RL-row LHS block) x C panels into the F32
// accumulators: for a 32-block K, acc += Σ · (s_w · s_a).
template <class V, class K, size_t R, size_t C, size_t RL = R>
inline void accumulate(const uint8_t* w, size_t stride, const uint8_t* a, typename V::F acc[C][R], size_t pf = 0) {
  if constexpr (prefetches_in_step<K>()) {
    K::template step<R, C, RL>(w, stride, a, acc, pf);
  } else if constexpr (step_blocks<K>() > 1) {
    K::template step<R, C, RL>(w, stride, a, acc);
  } else {
    typename V::I s[C][R];
    K::template dot<R, C, RL>(w, stride, a, s);
    for (size_t c = 0; c < C; ++c) {
      const typename V::F sw = V::load_f16(at<V, 2>(w, stride, c, K::kScaleOffset));
      for (size_t r = 0; r < R; ++r) acc[c][r] = V::add_scaled(acc[c][r], s[c][r], sw, V::broadcast_f32(a + 32 * RL + 4 * r));
    }
  }
}

// One R-row x C-panel tile over all blocks (the first R rows of an RL-row LHS panel), F32
// accumulators per row and panel; each block's scales are applied once: acc += Σ · (s_w · s_a).
// With pf != 0, block b of each panel at +pf (the next tile's) is prefetched into L2, as the
// GEMV over 8-column panels does.
template <class V, class K, size_t R, size_t C, size_t RL = R>
inline void gemm_tile(size_t m, size_t i0, size_t j0, size_t n, size_t blocks, const uint8_t* lp, const uint8_t* rp,
                      size_t rhs_panel, size_t pf, float* dst, size_t stride, typename V::F vlo, typename V::F vhi) {
  static_assert(kSplit<V> == 1, "the GEMM tiles read whole panels");
  constexpr size_t nr = V::kLanes;
  typename V::F acc[C][R];
  for (size_t c = 0; c < C; ++c)
    for (size_t r = 0; r < R; ++r) acc[c][r] = V::zero();
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* w = rp + b * K::kRhsBlock;
    const uint8_t* a = lp + b * step_blocks<K>() * RL * x86lhs::kBlockBytes;
    if constexpr (prefetches_in_step<K>()) {
      accumulate<V, K, R, C, RL>(w, rhs_panel, a, acc, pf);
      continue;
    }
    if (pf != 0) {
      for (size_t c = 0; c < C; ++c) prefetch_lines<K::kRhsBlock>(w + c * rhs_panel + pf);
    }
    accumulate<V, K, R, C, RL>(w, rhs_panel, a, acc);
  }
  for (size_t c = 0; c < C; ++c) {
    const size_t jc = j0 + c * nr;
    const size_t cols = n - jc < nr ? n - jc : nr;
    for (size_t r = 0; r < R && i0 + r < m; ++r) {
      float* row = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + (i0 + r) * stride);
      V::store_clamped(row + jc, acc[c][r], cols, vlo, vhi);
    }
  }
}

// dst[m, n] = clamp(lhs · Wᵀ) in R-row x C-panel tiles (C·V::kLanes columns) over an LHS
// packed in RL-row panels (R < RL only for m ≤ R: one row tile), the last panels one at a time. The last row tile of each column tile
// prefetches the next column tile's weights: with few rows (batched decode, m ≤ R) the weights
// stream from DRAM once, and without it the hardware prefetcher restarts at every panel (half
// the GEMV's bandwidth at m = 2).
template <class V, class K, size_t R, size_t C, size_t RL>
void gemm_cols(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
               float hi) {
  constexpr size_t nr = V::kLanes;
  const size_t blocks = k / (kBlock * step_blocks<K>());  // steps
  const size_t lhs_panel = x86lhs::panel_bytes(RL, k), rhs_panel = blocks * K::kRhsBlock;
  const typename V::F vlo = V::set1(lo), vhi = V::set1(hi);
  const auto* lp = static_cast<const uint8_t*>(lhs);
  const auto* rp = static_cast<const uint8_t*>(rhs);
  size_t j0 = 0;
  for (; j0 + C * nr <= n; j0 += C * nr)
    for (size_t i0 = 0; i0 < m; i0 += R) {
      const size_t pf = i0 + R >= m && j0 + C * nr < n ? C * rhs_panel : 0;
      gemm_tile<V, K, R, C, RL>(m, i0, j0, n, blocks, lp + i0 / RL * lhs_panel, rp + j0 / nr * rhs_panel, rhs_panel, pf,
                                dst, stride, vlo, vhi);
    }
  for (; j0 < n; j0 += nr)
    for (size_t i0 = 0; i0 < m; i0 += R) {
      const size_t pf = i0 + R >= m && j0 + nr < n ? rhs_panel : 0;
      gemm_tile<V, K, R, 1, RL>(m, i0, j0, n, blocks, lp + i0 / RL * lhs_panel, rp + j0 / nr * rhs_panel, rhs_panel, pf,
                                dst, stride, vlo, vhi);
    }
}

// GEMV: columns go in groups of 4 panels (4 concurrent read streams, as the plain read the
// paired figure divides by; each activation broadcast serves the group). Each panel's stream
// is prefetched into L2 ahead of its reads, so DRAM reads run on across panel ends: the
// hardware prefetcher stops at the end of each panel and restarts on the next one, which cost
// 10-25% of the DRAM bandwidth at k = 2048 on Zen 3 (docs/performance-decode.md). How far ahead is
// kGemvAhead<V>:
//   - AVX-512 layouts (16-column panels): ~2 KiB ahead in each panel's stream (rounded up to
//     whole steps: 8 Q4_0 blocks, 4 Q8_0, one K-quant super-block), running on into the same
//     panel of the next group near a panel's end. On the 2-vCPU Xeon (model 167) this
//     took the Q4_0 GEMV from 78-83% to 92-95% of the paired read and Q8_0 from 88-90% to
//     97-99%; the same block of the next group (below) came too late or too early there
//     (84% with 4 panels, 80% with 2), and 1-4.6 KiB ahead all read alike.
//   - 8-column layouts (AVX2 / AVX-VNNI), 0: the same block of the next group, as tuned on
//     Zen 3 (2 or 3 groups ahead, T0 / NTA hints, prefetches within the panel and groups of 2
//     or 8 ymm panels were measured worse there). On the Xeon that read 86-88 % of the
//     paired read for Q4_K / Q6_K, where one super-block ahead within the panel (kGemvNear)
//     reads 88-90 %, as the zmm GEMVs: the 8-column K-quant GEMVs come in both kinds, and the
//     tuner measures which the CPU reads faster.
// The hint (kGemvHint, L2) is a template parameter too: on the 2-vCPU Emerald Rapids Xeon
// (model 207) the zmm Q4_0 / Q8_0 / IQ4_NL streams read 2-5 points closer to the paired read
// prefetched into L1 (_MM_HINT_T0, as the zmm K-quant GEMVs' own steps do), so those come
// in both kinds (`..._dpbusdl1`) and the tuner measures which one the CPU streams faster.
// The prefetch stays inside the call's own columns (under threads, another thread owns the
// next ones): the panels left over (n / 16 not a multiple of 4) go first, as a smaller group,
// so the last group has none to prefetch.
constexpr size_t kGemvPanels = 4;
template <class V>
constexpr size_t kGemvAhead = kPanel<V> >= 16 ? 2048 : 0;  // bytes; 0: the next group's block
constexpr size_t kGemvNear = 1024;  // bytes: an 8-column GEMV's other kind (one K-quant super-block)
constexpr int kGemvHint = _MM_HINT_T1;

// P column (sub-)panels of R rows (the first R of an RL-row LHS panel; the GEMV: 1 of 1),
// blocks [b0, b1): acc[p][r] += Σ sums · s_w · s_a, and block b of each panel is prefetched at +pf.
template <class V, class K, size_t P, size_t R = 1, size_t RL = 1, int Hint = kGemvHint>
inline void gemv_panels(const uint8_t* rp, size_t rhs_panel, size_t pf, const uint8_t* lp, size_t b0, size_t b1,
                        typename V::F acc[P][R]) {
  for (size_t b = b0; b < b1; ++b) {
    const uint8_t* a = lp + b * step_blocks<K>() * RL * x86lhs::kBlockBytes;
    const uint8_t* w = rp + b * K::kRhsBlock;
    if constexpr (prefetches_in_step<K>()) {
      accumulate<V, K, R, P, RL>(w, rhs_panel, a, acc, pf);
    } else {
      for (size_t p = 0; p < P; p += kSplit<V>) prefetch_lines<K::kRhsBlock, Hint>(at<V, 0>(w, rhs_panel, p, pf));
      accumulate<V, K, R, P, RL>(w, rhs_panel, a, acc);
    }
  }
}

// One group of P (sub-)panels from column j0 (`last`: no group follows it in this call), into
// rows [0, min(m, R)) of dst (`stride` bytes apart), columns [j0, min(n, j0 + P·kLanes)).
template <class V, class K, size_t P, size_t R = 1, size_t RL = 1, size_t Ahead = kGemvAhead<V>, int Hint = kGemvHint>
inline void gemv_group(size_t m, size_t n, size_t j0, size_t blocks, const uint8_t* lp, const uint8_t* rp,
                       size_t rhs_panel, bool last, float* dst, size_t stride, typename V::F vlo, typename V::F vhi) {
  constexpr size_t nr = V::kLanes, panels = P / kSplit<V>;
  typename V::F acc[P][R];
  for (size_t p = 0; p < P; ++p)
    for (size_t r = 0; r < R; ++r) acc[p][r] = V::zero();
  const size_t next = last ? 0 : panels * rhs_panel;  // to the same panel of the next group (0: re-touches its own lines)
  if constexpr (Ahead == 0) {
    gemv_panels<V, K, P, R, RL, Hint>(rp, rhs_panel, next, lp, 0, blocks, acc);
  } else {
    // d blocks ahead: block b + d of the panel, then block b + d − blocks of the next group's.
    const size_t d = std::min(blocks, (Ahead + K::kRhsBlock - 1) / K::kRhsBlock);
    gemv_panels<V, K, P, R, RL, Hint>(rp, rhs_panel, d * K::kRhsBlock, lp, 0, blocks - d, acc);
    gemv_panels<V, K, P, R, RL, Hint>(rp, rhs_panel, last ? 0 : next - (blocks - d) * K::kRhsBlock, lp, blocks - d, blocks, acc);
  }
  for (size_t r = 0; r < R && r < m; ++r) {
    float* row = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + r * stride);
    for (size_t p = 0; p < P && j0 + p * nr < n; ++p) {
      const size_t j = j0 + p * nr;
      V::store_clamped(row + j, acc[p][r], n - j < nr ? n - j : nr, vlo, vhi);
    }
  }
}

// dst[0, m) x [0, n) = clamp(lhs · Wᵀ) for m ≤ R rows (the first of an RL-row LHS panel), the
// columns in groups of G panels (kSplit sub-panels each), the panels left over (n / kPanel not
// a multiple of G) first, as a smaller group: each weight block is read once, from a stream
// prefetched ahead as the GEMV's, and multiplied with all R rows.
template <class V, class K, size_t G, size_t R = 1, size_t RL = 1, size_t Ahead = kGemvAhead<V>, int Hint = kGemvHint>
void stream_rows(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
                 float hi) {
  constexpr size_t np = kPanel<V>, sub = kSplit<V>;
  const size_t blocks = k / (kBlock * step_blocks<K>()), rhs_panel = blocks * K::kRhsBlock;
  const auto* lp = static_cast<const uint8_t*>(lhs);
  const auto* rp = static_cast<const uint8_t*>(rhs);
  const typename V::F vlo = V::set1(lo), vhi = V::set1(hi);
  const size_t panels = (n + np - 1) / np, groups = panels / G, left = panels % G;
  const bool none_after = groups == 0;
  [&]<size_t... L>(std::index_sequence<L...>) {
    ((left == L + 1 ? gemv_group<V, K, (L + 1) * sub, R, RL, Ahead, Hint>(m, n, 0, blocks, lp, rp, rhs_panel, none_after, dst, stride,
                                                              vlo, vhi)
                    : void()),
     ...);
  }(std::make_index_sequence<G - 1>{});
  for (size_t g = 0; g < groups; ++g) {
    const size_t j0 = left * np + g * G * np;
    gemv_group<V, K, G * sub, R, RL, Ahead, Hint>(m, n, j0, blocks, lp, rp + j0 / np * rhs_panel, rhs_panel, g + 1 == groups, dst,
                                     stride, vlo, vhi);
  }
}

// dst[0, n) = clamp(x · Wᵀ) for one row, in groups of G panels, prefetching Ahead bytes ahead
// in each panel (0: the next group's block) with hint Hint.
template <class V, class K, size_t Ahead = kGemvAhead<V>, size_t G = kGemvPanels, int Hint = kGemvHint>
void gemv(size_t n, size_t k, const void* lhs, const void* rhs, float* dst, float lo, float hi) {
  stream_rows<V, K, G, 1, 1, Ahead, Hint>(1, n, k, lhs, rhs, dst, 0, lo, hi);
}

// The GEMM of an R-row x C-panel kernel. A few rows (batched decode: m ≤ R/4 or ≤ R/2) compute
// only those rows, in tiles as many panels wider (the same registers; each activation
// broadcast serves more panels) instead of multiplying padding rows, and stream the weights as
// the GEMV does (stream_rows: each panel prefetched kGemvAhead ahead, running on into the next
// group; as column tiles that prefetched the next tile, 4 rows read 71 % of the paired read on
// the 2-vCPU Xeon). The sums are the same per row and column either way (the same blocks in
// the same order): the rows' bits do not depend on the path. KFew, the few rows' block type,
// may differ from K in its prefetch only (VnniQ6K: the GEMM tiles' prefetch per super-block,
// the few rows' spread over its 32-blocks as the GEMV's: a burst of 27-53 L2 prefetches per
// panel and super-block ahead of the reads that stream from DRAM). FewHint: the few rows'
// prefetch hint (_MM_HINT_T0 in the GEMM twins of the L1 GEMVs, Ukernel::few_rows).
template <class V, class K, size_t R, size_t C = 1, class KFew = K, int FewHint = kGemvHint>
void gemm(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride, float lo,
          float hi) {
  if constexpr (R % 4 == 0) {
    if (m <= R / 4) return stream_rows<V, KFew, 4 * C, R / 4, R, kGemvAhead<V>, FewHint>(m, n, k, lhs, rhs, dst, stride, lo, hi);
  }
  if constexpr (R % 2 == 0) {
    if (m <= R / 2) return stream_rows<V, KFew, 2 * C, R / 2, R, kGemvAhead<V>, FewHint>(m, n, k, lhs, rhs, dst, stride, lo, hi);
  }
  gemm_cols<V, K, R, C, R>(m, n, k, lhs, rhs, dst, stride, lo, hi);
}

// The min-term factors nb[r] = s_a·(−8·Σa) (F32) of the RL rows of an LHS block a, once per
// row tile instead of once per row and column panel (3 instructions per row and sub-block,
// which the K kernels' tiles with one column panel paid per 8 dot products). RL >= 4: the
// block's F32 scales and int16 pairs are RL contiguous 32-bit values each (x86lhs layout);
// the same operations as per row, so the results are the same bits.
template <size_t RL>
inline void min_factors(const uint8_t* a, float nb[RL]) {
  static_assert(RL == 4 || RL == 8);
  const auto* sa = reinterpret_cast<const float*>(a + 32 * RL);
  if constexpr (RL == 8) {
    const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 36 * RL));
    _mm256_storeu_ps(nb, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1))), _mm256_loadu_ps(sa)));
  } else {
    const __m128i pairs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 36 * RL));
    _mm_storeu_ps(nb, _mm_mul_ps(_mm_cvtepi32_ps(_mm_madd_epi16(pairs, _mm_set1_epi16(1))), _mm_loadu_ps(sa)));
  }
}

// The min factors of a super-block's 8 sub-blocks (LHS blocks a ..), nb[j·RL + r], where
// RL >= 4; computed ahead into memory, so the sub-blocks' FMAs take them as broadcast memory
// operands (computed per sub-block, GCC moved them lane by lane out of a register: one more
// shuffle and broadcast per row). Below 4 rows nb is left unset and unread, but sized for all
// sub-blocks all the same: the callers step a pointer through it per sub-block.
template <size_t RL>
constexpr size_t kMinFactors = 8 * RL;
template <size_t RL>
inline void super_block_min_factors(const uint8_t* a, float* nb) {
  if constexpr (RL >= 4) {
    for (size_t j = 0; j < 8; ++j) min_factors<RL>(a + j * RL * x86lhs::kBlockBytes, nb + j * RL);
  }
}

// VNNI blocks (V::dpbusd). Q4_0, weights as stored (u = w + 8): the sums start at −8·Σa
// (the LHS's int16 pair times 1) and vpdpbusd adds u·a for the low and high nibbles.
template <class V>
struct VnniQ4 {
  static constexpr size_t kRhsBlock = kPanel<V> * 18, kScaleOffset = 16 * kPanel<V>;
  template <size_t R, size_t C, size_t RL = R>
  static void dot(const uint8_t* w, size_t stride, const uint8_t* a, typename V::I s[C][R]) {
    const typename V::I m4 = V::set1_i8(0x0f);
    for (size_t r = 0; r < R; ++r) {
      const typename V::I zp = V::madd_i16(V::broadcast4(a + 36 * RL + 4 * r), 1);
      for (size_t c = 0; c < C; ++c) s[c][r] = zp;
    }
#pragma GCC unroll 1
    for (size_t v = 0; v < 4; ++v) {
      typename V::I lo[C], hi[C];
      for (size_t c = 0; c < C; ++c) {
        const typename V::I wv = V::load(at<V, 4>(w, stride, c, 4 * kPanel<V> * v));
        lo[c] = V::and_(wv, m4);
        hi[c] = V::and_(V::srli16_4(wv), m4);
      }
      for (size_t r = 0; r < R; ++r) {
        const typename V::I alo = V::broadcast4(a + 4 * RL * v + 4 * r), ahi = V::broadcast4(a + 4 * RL * (v + 4) + 4 * r);
        for (size_t c = 0; c < C; ++c) s[c][r] = V::dpbusd(V::dpbusd(s[c][r], lo[c], alo), hi[c], ahi);
      }
    }
  }
};

// Q4_K (rhs_pack_nxk_q4kp_q4k, nr = V::kLanes): one super-block per step. Per sub-block j
// (one pass per nibble: both at once need 2·C·R accumulators, which spilled the ymm tiles),
// vpdpbusd of its 4-bit levels (the low or high nibbles of its 32-byte group) by the
// activations into int32; then acc += Σ·((d·sc_j)·s_a) and the min term
// acc += (dmin/8·m_j)·((−8·Σa)·s_a), the last factor once per row (−8·Σa from the LHS's int16
// pair, vpmaddwd by 1).
template <class V>
struct VnniQ4K {
  static constexpr size_t kNr = kPanel<V>, kStepBlocks = 8, kRhsBlock = kNr * 148;
  static constexpr bool kPrefetchesInStep = true;
  template <size_t R, size_t C, size_t RL = R>
  static void step(const uint8_t* w, size_t stride, const uint8_t* a, typename V::F acc[C][R], size_t pf) {
    typename V::F d[C], dmin8[C];
    for (size_t c = 0; c < C; ++c) {
      d[c] = V::load_f16(at<V, 2>(w, stride, c, 144 * kNr));
      dmin8[c] = V::mul(V::load_f16(at<V, 2>(w, stride, c, 146 * kNr)), V::set1(0.125f));
    }
    float nb[kMinFactors<RL>];
    super_block_min_factors<RL>(a, nb);
#pragma GCC unroll 1
    for (size_t pair = 0; pair < 4; ++pair) {  // sub-blocks 2·pair (low nibbles) and 2·pair + 1
      const uint8_t* a0 = a + 2 * pair * RL * x86lhs::kBlockBytes;
      sub_block<false, R, C, RL>(w, stride, pair, a0, d, dmin8, nb + 2 * pair * RL, acc, pf);
      sub_block<true, R, C, RL>(w, stride, pair, a0 + RL * x86lhs::kBlockBytes, d, dmin8, nb + (2 * pair + 1) * RL, acc,
                                pf);
    }
  }

  template <bool kHigh, size_t R, size_t C, size_t RL>
  static void sub_block(const uint8_t* w, size_t stride, size_t pair, const uint8_t* aj, const typename V::F d[C],
                        const typename V::F dmin8[C], const float* nb, typename V::F acc[C][R], size_t pf) {
    if (pf != 0) {  // an eighth of the super-block at +pf (the GEMV's next one) per sub-block
      for (size_t c = 0; c < C; c += kSplit<V>) prefetch_part<kRhsBlock, 8>(at<V, 0>(w, stride, c, pf), 2 * pair + kHigh);
    }
    const typename V::I m4 = V::set1_i8(0x0f);
    typename V::I s[C][R];
    for (size_t c = 0; c < C; ++c)
      for (size_t r = 0; r < R; ++r) s[c][r] = V::set1_i8(0);
    for (size_t v = 0; v < 8; ++v) {
      typename V::I u[C];
      for (size_t c = 0; c < C; ++c) {
        const typename V::I wv = V::load(at<V, 4>(w, stride, c, pair * 32 * kNr + 4 * kNr * v));
        u[c] = V::and_(kHigh ? V::srli16_4(wv) : wv, m4);
      }
      for (size_t r = 0; r < R; ++r) {
        const typename V::I av = V::broadcast4(aj + 4 * RL * v + 4 * r);
        for (size_t c = 0; c < C; ++c) s[c][r] = V::dpbusd(s[c][r], u[c], av);
      }
    }
    finish<R, C, RL>(w, stride, 2 * pair + kHigh, aj, d, dmin8, nb, s, acc);
  }

  // Sub-block j's scales on its int32 sums s, and its min term, into acc (Q5K uses it too);
  // nb: the sub-block's min factors (super_block_min_factors) where RL >= 4.
  template <size_t R, size_t C, size_t RL>
  static void finish(const uint8_t* w, size_t stride, size_t j, const uint8_t* aj, const typename V::F d[C],
                     const typename V::F dmin8[C], const float* nb, typename V::I s[C][R], typename V::F acc[C][R]) {
    typename V::F sc[C], mn[C];
    for (size_t c = 0; c < C; ++c) {
      const uint8_t* sm = at<V, 1>(w, stride, c, 128 * kNr + 2 * kNr * j);
      sc[c] = V::mul(V::load_u8_f32(sm), d[c]);
      mn[c] = V::mul(V::load_u8_f32(sm + kNr), dmin8[c]);
    }
    for (size_t r = 0; r < R; ++r) {
      const typename V::F sa = V::broadcast_f32(aj + 32 * RL + 4 * r);
      typename V::F nbr;
      if constexpr (RL >= 4) {
        nbr = V::broadcast_f32(reinterpret_cast<const uint8_t*>(nb + r));
      } else {
        nbr = V::mul(V::to_f32(V::madd_i16(V::broadcast4(aj + 36 * RL + 4 * r), 1)), sa);
      }
      for (size_t c = 0; c < C; ++c) acc[c][r] = V::fmadd(mn[c], nbr, V::add_scaled(acc[c][r], s[c][r], sc[c], sa));
    }
  }
};

// Q8_0, weights stored u = w + 128: the sums start at −128·Σa (the int16 pair times 16).
template <class V>
struct VnniQ8 {
  static constexpr size_t kRhsBlock = kPanel<V> * 34, kScaleOffset = 32 * kPanel<V>;
  template <size_t R, size_t C, size_t RL = R>
  static void dot(const uint8_t* w, size_t stride, const uint8_t* a, typename V::I s[C][R]) {
    for (size_t r = 0; r < R; ++r) {
      const typename V::I zp = V::madd_i16(V::broadcast4(a + 36 * RL + 4 * r), 16);
      for (size_t c = 0; c < C; ++c) s[c][r] = zp;
    }
#pragma GCC unroll 1
    for (size_t v = 0; v < 8; ++v) {
      typename V::I wv[C];
      for (size_t c = 0; c < C; ++c) wv[c] = V::load(at<V, 4>(w, stride, c, 4 * kPanel<V> * v));
      for (size_t r = 0; r < R; ++r) {
        const typename V::I av = V::broadcast4(a + 4 * RL * v + 4 * r);
        for (size_t c = 0; c < C; ++c) s[c][r] = V::dpbusd(s[c][r], wv[c], av);
      }
    }
  }
};

}  // namespace
}  // namespace qmm::x86q
