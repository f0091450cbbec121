#include "matmul/matmul.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/channels.h"
#include "core/cpu.h"
#include "core/error.h"
#include "kernels/kernel_list.h"

namespace qmm {
namespace {

MatmulTraceFn g_trace = nullptr;
void* g_trace_user = nullptr;

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
size_t round_up(size_t a, size_t b) { return ceil_div(a, b) * b; }

// Rows per row tile of an m-row matmul: 64, except for the AMX-BF16 GEMMs, which dequantize
// the weights of a call once for all its rows: as many rows as keep their BF16 activations
// within ~1 MiB (L2), 64 to 256 (k 2048: 256). Measured on the 2-vCPU Xeon (performance-amx.md).
size_t row_tile(const Ukernel& u, const TileParams& p, size_t m, size_t k) {
  const size_t most = u.isa == Isa::amxbf16 ? std::clamp<size_t>((size_t{1} << 20) / (2 * k), 64, 256) : 64;
  return std::min(round_up(m, p.m_step), round_up(std::max<size_t>(p.m_step, most), p.m_step));
}

// The guided column chunks of a matmul whose rows fit one row tile: each grab takes 1/threads
// of the columns still left, down to ~256 KiB of weights, or to an even share of all columns
// where that is less (a matrix under threads x 256 KiB: without it, 2 threads split a 0.5B
// model's 896 x 896 Q4_0 GEMV 528 + 368 columns, at 64-68 % of the paired read against
// 78-84 % evenly, and its 128 x 896 K / V GEMVs ran on one thread).
struct GuidedChunks {
  size_t n, n_step, threads, min_cols;
  GuidedChunks(const PackedWeights& w, const TileParams& p, size_t m, size_t threads_)
      : n(w.n()), n_step(p.n_step), threads(threads_) {
    const size_t col_bytes = std::max<size_t>(1, w.bytes() / round_up(n, p.nr));
    const size_t chunk = m == 1 ? w.chunk_bytes() : DecodePlan::kDefaultChunkBytes;
    min_cols = round_up(std::max<size_t>(m > p.m_step ? 64 : 1, ceil_div(chunk, col_bytes)), n_step);
    min_cols = std::min(min_cols, round_up(ceil_div(n, threads), n_step));
  }
  size_t cols(size_t n0) const { return std::min(n - n0, std::max(min_cols, round_up((n - n0) / threads, n_step))); }
};

// Points each idle worker at the first 128 KiB of the chunk it will likely grab in the next
// matmul, m rows times `w` (grab t for worker t; the last worker also takes the caller's grab
// 0), to prefetch while the caller works between the two matmuls.
void prefetch_next(const PackedWeights& w, size_t m, ThreadPool& pool) {
  const Ukernel& u = w.kernel_for(m);
  const TileParams& p = w.params_for(m);
  const size_t threads = static_cast<size_t>(pool.threads());
  if (threads == 1 || m > row_tile(u, p, m, w.k())) return;
  constexpr size_t kAhead = size_t{128} << 10;
  const GuidedChunks chunks(w, p, m, threads);
  auto at = [&](size_t n0) { return w.data() + rhs_packed_offset(u, p, n0, w.k()); };
  auto ahead = [&](size_t n0) { return std::min(kAhead, w.bytes() - rhs_packed_offset(u, p, n0, w.k())); };
  size_t n0 = chunks.cols(0);  // grab 1
  for (size_t t = 1; t < threads && n0 < w.n(); n0 += chunks.cols(n0), ++t) {
    const bool last = t + 1 == threads;
    pool.prefetch_while_idle(static_cast<int>(t), at(n0), ahead(n0), last ? at(0) : nullptr, last ? ahead(0) : 0);
  }
}

// The hybrid SME + NEON run of a prefill's tiles (Context::set_sme_threads): threads 0..sme-1
// take tiles with the SME2 kernel from the front, the others with its NEON twin from the back,
// until the two ends meet, so each side's share is its measured speed. A NEON thread stops
// taking tiles while fewer than ratio·sme remain (ratio: the twin's time per tile over the SME2
// kernel's): the SME2 threads would finish those sooner than its one tile. The ratio is measured
// once per context, on the first tile, computed by both kernels (same bits, same place), the twin first.
// tile_at(t, neon) computes tile t with the SME2 kernel or (neon) its NEON twin.
template <class Tile>
void run_hybrid(size_t tiles, int sme, const Tile& tile_at, Context& ctx) {
  using clock = std::chrono::steady_clock;
  double ratio = ctx.neon_sme_ratio();
  uint64_t start = 0;
  if (ratio == 0.0) {
    // The twin first: it meets the cold caches, so the ratio errs high and NEON threads stop early.
    const auto t0 = clock::now();
    tile_at(0, true);
    const auto t1 = clock::now();
    tile_at(0, false);
    const auto t2 = clock::now();
    ratio = std::max(1e-3, std::chrono::duration<double>(t1 - t0).count() /
                               std::max(1e-9, std::chrono::duration<double>(t2 - t1).count()));
    start = 1;
  }
  std::atomic<uint64_t> ends{start};  // tiles taken from the front (low 32 bits) and the back
  std::atomic<size_t> neon_tiles{0};
  const double keep = ratio * sme;
  // The role is the task's, not the thread's: parallel_for may give every task to workers
  // 1.. while the caller (thread 0) is descheduled, and then no SME2 taker would run and the
  // tiles NEON leaves (fewer than `keep`) would stay unwritten. Tasks 0..sme-1 always run.
  ctx.pool().parallel_for(static_cast<size_t>(ctx.threads()), [&](size_t task, int) {
    const bool on_sme = task < static_cast<size_t>(sme);
    for (uint64_t e = ends.load(std::memory_order_relaxed);;) {
      const size_t front = e & 0xffffffffu, back = e >> 32;
      if (front + back >= tiles || (!on_sme && static_cast<double>(tiles - front - back) < keep)) return;
      if (!ends.compare_exchange_weak(e, e + (on_sme ? 1 : uint64_t{1} << 32), std::memory_order_relaxed)) continue;
      if (on_sme) {
        tile_at(front, false);
      } else {
        tile_at(tiles - 1 - back, true);
        neon_tiles.fetch_add(1, std::memory_order_relaxed);
      }
      e = ends.load(std::memory_order_relaxed);
    }
  });
  ctx.record_hybrid(neon_tiles.load(), ratio);
}

}  // namespace

int Context::sme_threads_from_env() {
  const char* s = std::getenv("QMM_SME_THREADS");
  if (s == nullptr || *s == '\0') return 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  check_arg(*end == '\0' && v >= 0 && v <= 65536,
            std::string("QMM_SME_THREADS must be a thread count >= 0 (0: SME2 on every thread), got '") + s + "'");
  return static_cast<int>(v);
}

void Context::set_sme_threads(int threads) {
  check_arg(threads >= 0, "sme threads must be >= 0 (0: SME2 on every thread)");
  sme_threads_ = threads;
}

std::vector<size_t> column_grabs(const PackedWeights& w, size_t m, size_t threads) {
  check_arg(threads >= 1, "column_grabs: threads must be >= 1");
  if (threads == 1) return {w.n()};
  const GuidedChunks chunks(w, w.params_for(m), m, threads);
  std::vector<size_t> out;
  for (size_t n0 = 0; n0 < w.n(); n0 += out.back()) out.push_back(chunks.cols(n0));
  return out;
}

void set_matmul_trace(MatmulTraceFn fn, void* user) {
  g_trace = fn;
  g_trace_user = user;
}

bool shape_ok(WeightType type, size_t rows, size_t k) {
  const TypeInfo& t = type_info(type);  // one look-up (block_len is 1 for the unblocked types)
  return rows > 0 && k > 0 && rows <= kMaxDim && k <= kMaxDim && rows * k <= kMaxElements && k % t.block_len == 0 &&
         (!t.per_channel() || k <= kMaxChannelK);
}

void check_shape(WeightType type, size_t rows, size_t k, const char* what) {
  if (shape_ok(type, rows, k)) [[likely]] return;  // the message only when it fails
  const std::string shape = std::string(what) + " [" + std::to_string(rows) + ", " + std::to_string(k) + "]";
  check_arg(rows > 0 && k > 0, shape + ": sizes must be > 0");
  check_arg(rows <= kMaxDim && k <= kMaxDim && rows * k <= kMaxElements,
            shape + ": too large (at most 2^31 rows and columns and 2^40 elements)");
  if (is_block_type(type)) {
    check_arg(k % block_len(type) == 0, shape + ": " + type_name(type) + " needs k to be a multiple of " +
                                            std::to_string(block_len(type)) + " (got k = " + std::to_string(k) + ")");
  }
  if (is_channel_type(type)) {
    check_arg(k <= kMaxChannelK, shape + ": " + type_name(type) + " needs k <= 65536 (its int32 sums are exact only up to there)");
  }
}

void check_panel_start(size_t idx, size_t k) {
  check_arg(idx <= kMaxDim && idx * k <= kMaxElements,
            "panel start " + std::to_string(idx) + " with k = " + std::to_string(k) + " is too large");
}

PackedWeights PackedWeights::pack(WeightType type, size_t n, size_t k, const void* data, const KernelFilter& filter,
                                  ThreadPool* pool, bool huge_pages) {
  check_weight_shape(type, n, k);
  const KernelPair pair = select_kernels(type, filter, cpu_info());
  PackedWeights w = pack_with(*pair.gemm, *pair.gemv, n, k, data, pool, huge_pages);
  w.set_few_rows(pair.few);
  w.set_wide(pair.wide);
  return w;
}

void PackedWeights::set_wide(const Ukernel* wide) {
  check_arg(wide == nullptr || (!wide->gemv && shares_packed_rhs(*wide, *gemm_) && wide->lhs->max_abs == INFINITY),
            "a wide-range GEMM must read the GEMM's packed RHS and hold every activation");
  wide_ = wide;
  wide_params_ = wide ? kernel_params(*wide) : TileParams{};
}

void PackedWeights::set_few_rows(const std::array<FewRows, 2>& few) {
  size_t below = static_cast<size_t>(-1);
  for (const FewRows& t : few) {
    check_arg(t.gemm == nullptr || (!t.gemm->gemv && shares_packed_rhs(*t.gemm, *gemm_) && t.below < below),
              "a few-rows GEMM must read the GEMM's packed RHS and serve fewer rows than the tier before it");
    if (t.gemm) below = t.below;
  }
  for (size_t i = 0; i < few.size(); ++i) {
    few_[i] = few[i].gemm ? few[i] : FewRows{};
    few_params_[i] = few[i].gemm ? kernel_params(*few[i].gemm) : TileParams{};
  }
  update_few_rows();
}

void PackedWeights::update_few_rows() {
  few_rows_max_ = 0;
  const Ukernel* twin = gemv_->few_rows;
  if (!twin) return;
  // The GEMM that serves 2 rows without the twin: the twin stands in for it only where it is
  // that GEMM's twin (same ISA, packers and tiles: the same bits), for the rows its few-row
  // streams serve (x86q::gemm: m <= mr / 2). (An AMX CPU's 2-4 rows run on the AVX-512 VNNI tier.)
  const std::optional<size_t> i = tier(2);
  const Ukernel& base = i ? *few_[*i].gemm : *gemm_;
  const TileParams p = kernel_params(*twin);
  if (twin->gemv || tier(std::max<size_t>(2, p.mr / 2)) != i || base.isa != twin->isa || base.lhs != twin->lhs ||
      !shares_packed_rhs(base, *twin) || p.mr != kernel_params(base).mr) {
    return;
  }
  few_rows_params_ = p;
  few_rows_max_ = p.mr / 2;
}

PackedWeights PackedWeights::with_kernels(const Ukernel& gemm, const Ukernel& gemv, size_t n, size_t k) {
  PackedWeights w;
  w.gemm_ = &gemm;
  w.gemv_ = &gemv;
  w.gemm_params_ = kernel_params(gemm);
  w.gemv_params_ = kernel_params(gemv);
  w.update_few_rows();
  w.n_ = n;
  w.k_ = k;
  w.svl_bytes_ = gemm.isa == Isa::sme2 ? cpu_info().svl_bytes : 0;
  return w;
}

PackedWeights PackedWeights::pack_with(const Ukernel& gemm, const Ukernel& gemv, size_t n, size_t k, const void* data,
                                       ThreadPool* pool, bool huge_pages) {
  check_weight_shape(gemm.type, n, k);
  check_arg(data != nullptr, "weight data is null");
  check_arg(gemv.type == gemm.type && gemv.rhs == gemm.rhs, "GEMV and GEMM must share the packed RHS");
  PackedWeights w = with_kernels(gemm, gemv, n, k);
  const TileParams& p = w.gemm_params_;
  w.buf_.resize(rhs_packed_size(gemm, p, n, k));  // zeroed: rows beyond n in the last panel stay 0
  if (huge_pages) advise_huge_pages(w.buf_.data(), w.buf_.size());  // (before the pack faults the pages in)
  // Panels are independent: pack groups of them in parallel.
  const size_t panels = ceil_div(n, p.nr);
  const size_t per_task = std::max<size_t>(1, panels / 64);
  const size_t in_row = row_bytes(gemm.type, k);
  auto task = [&](size_t t, int) {
    const size_t n0 = t * per_task * p.nr;
    const size_t rows = std::min(n - n0, per_task * p.nr);
    gemm.rhs->run(rows, k, p.nr, p.kr, p.sr, static_cast<const uint8_t*>(data) + n0 * in_row,
                  w.buf_.data() + rhs_packed_offset(gemm, p, n0, k));
  };
  const size_t tasks = ceil_div(panels, per_task);
  if (pool) {
    pool->parallel_for(tasks, task);
  } else {
    for (size_t t = 0; t < tasks; ++t) task(t, 0);
  }
  return w;
}

PackedWeights PackedWeights::adopt(const Ukernel& gemm, const Ukernel& gemv, size_t n, size_t k, const uint8_t* data,
                                   size_t bytes, std::shared_ptr<const void> owner) {
  check_weight_shape(gemm.type, n, k);
  check_arg(data != nullptr && owner != nullptr, "adopted weights need data and an owner");
  check_arg(!gemm.gemv && shares_packed_rhs(gemv, gemm), "GEMV and GEMM must share the packed RHS");
  check_arg(reinterpret_cast<uintptr_t>(data) % AlignedBuffer::kAlign == 0, "adopted weights must be 64-byte aligned");
  check_arg(gemm.isa != Isa::sme2, "SME2 weights are not adopted (their layout depends on the SVL)");
  PackedWeights w = with_kernels(gemm, gemv, n, k);
  check_arg(bytes == rhs_packed_size(gemm, w.gemm_params_, n, k), "adopted weights have the wrong size for their packer");
  w.ext_ = data;
  w.ext_bytes_ = bytes;
  w.owner_ = std::move(owner);
  return w;
}

void PackedWeights::set_decode_plan(const DecodePlan& plan) {
  check_arg(plan.gemv != nullptr && plan.gemv->type == gemm_->type &&
                (plan.gemv == gemm_ || (plan.gemv->gemv && shares_packed_rhs(*plan.gemv, *gemm_))),
            "the decode plan's GEMV must read the GEMM's packed RHS");
  check_arg(plan.chunk_bytes >= 4096 && plan.chunk_bytes <= (size_t{1} << 30), "decode chunk out of range");
  gemv_ = plan.gemv;
  gemv_params_ = kernel_params(*plan.gemv);
  update_few_rows();
  chunk_bytes_ = plan.chunk_bytes;
  measured_ = plan.measured;
}

namespace {

// Whether an m-row call must leave kernel_for(m) for w.wide(): an activation beyond the range of
// the kernel's LHS packer (the F16-activation GEMMs: |x| > 65504 or infinite). A NaN is NaN on
// either path. Costs one pass over the m x k activations, and only where the range is narrower.
bool needs_wide(const PackedWeights& w, size_t m, const float* lhs, size_t lhs_stride) {
  const float most = w.kernel_for(m).lhs->max_abs;
  if (!w.wide() || most == INFINITY) return false;
  for (size_t r = 0; r < m; ++r) {
    const float* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + r * lhs_stride);
    float largest = 0.0f;
    for (size_t c = 0; c < w.k(); ++c) largest = std::max(largest, std::fabs(row[c]));
    if (largest > most) return true;
  }
  return false;
}

// Whether an m-row call asked to split (Context::set_sme_threads) must leave kernel_for(m) for
// w.wide(): the chosen GEMM has no NEON twin and is the narrow-range one (the F16-activation Q4_0
// GEMM) while the wide GEMM on the same packed weights has one (the int8 GEMM), so the split the
// caller asked for runs on that pair rather than being dropped.
bool split_takes_wide(const PackedWeights& w, size_t m, const Context& ctx) {
  const int sme = ctx.sme_threads();
  if (sme <= 0 || sme >= ctx.threads() || !w.wide()) return false;
  const Ukernel& u = w.kernel_for(m);
  return u.lhs->max_abs != INFINITY && neon_twin(u) == nullptr && neon_twin(*w.wide()) != nullptr;
}

// Whether an m-row call runs w.wide() instead of kernel_for(m): its split or its range needs it.
bool takes_wide(const PackedWeights& w, size_t m, const float* lhs, size_t lhs_stride, const Context& ctx) {
  return split_takes_wide(w, m, ctx) || needs_wide(w, m, lhs, lhs_stride);
}

void run_matmul(const PackedWeights& w, size_t m, const float* lhs, size_t lhs_stride, float* dst, size_t dst_stride,
                float lo, float hi, Context& ctx, const PackedWeights* next) {
  check_shape(w.type(), m, w.k(), "activations");
  const bool wide = takes_wide(w, m, lhs, lhs_stride, ctx);
  const Ukernel& u = wide ? *w.wide() : w.kernel_for(m);
  const TileParams& p = wide ? w.wide_params() : w.params_for(m);
  const size_t n = w.n(), k = w.k();
  if (w.svl_bytes() != 0 && w.svl_bytes() != cpu_info().svl_bytes) {
    fail(Status::unsupported, "weights were packed for SVL " + std::to_string(w.svl_bytes() * 8) +
                                  " bits, this CPU has " + std::to_string(cpu_info().svl_bytes * 8));
  }
  uint8_t* lhs_packed = ctx.scratch(lhs_packed_size(u, p, m, k));
  ThreadPool& pool = ctx.pool();
  const size_t threads = static_cast<size_t>(pool.threads());

  // 1. Quantize and pack the activations, split by mr-row panels.
  const size_t panels = ceil_div(m, p.mr);
  const size_t panels_per_task = std::max<size_t>(1, ceil_div(panels, threads * 4));
  pool.parallel_for(ceil_div(panels, panels_per_task), [&](size_t t, int) {
    const size_t m0 = t * panels_per_task * p.mr;
    const size_t rows = std::min(m - m0, panels_per_task * p.mr);
    u.lhs->run(rows, k, p.mr, p.kr, p.sr, reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + m0 * lhs_stride),
               lhs_stride, lhs_packed + lhs_packed_offset(u, p, m0, k));
  });

  // 2. Output tiles aligned to m_step / n_step, handed out dynamically. A tile's result does
  //    not depend on the tiling, so any thread count gives the same bits.
  const size_t m_tile = row_tile(u, p, m, k);
  const size_t m_tiles = ceil_div(m, m_tile);
  auto run_tile = [&](size_t m0, size_t n0, size_t rows, size_t cols, MatmulFn fn) {
    fn(rows, cols, k, lhs_packed + lhs_packed_offset(u, p, m0, k), w.data() + rhs_packed_offset(u, p, n0, k),
          reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(dst) + dst_offset(m0, n0, dst_stride)), dst_stride, lo, hi);
  };
  // The hybrid split (Context::set_sme_threads) where the kernel has a NEON twin: tiles, below.
  const int sme = ctx.sme_threads();
  const MatmulFn twin = sme > 0 && static_cast<size_t>(sme) < threads ? neon_twin(u) : nullptr;
  if (m_tiles == 1 && threads > 1 && !twin) {
    // One row tile (decode, small batches): guided chunks of columns. Each grab takes
    // 1/threads of the columns still left, down to ~256 KiB of weights: the first chunks are
    // as long as they can be (every chunk restarts the weight streams and the kernel's
    // prefetch) and the last ones short, so the threads finish close together.
    const GuidedChunks chunks(w, p, m, threads);
    std::atomic<size_t> free_col{0};
    pool.parallel_for(threads, [&](size_t, int) {
      for (size_t n0 = free_col.load(std::memory_order_relaxed); n0 < n;) {
        const size_t cols = chunks.cols(n0);
        if (free_col.compare_exchange_weak(n0, n0 + cols, std::memory_order_relaxed)) {
          run_tile(0, n0, m, cols, u.run);
          n0 = free_col.load(std::memory_order_relaxed);
        }
      }
    });
    if (next) prefetch_next(*next, m, pool);
    return;
  }
  //    Several row tiles (prefill), or one thread: tiles of m_tile rows by 64 columns (fewer,
  //    longer ones when 4 per thread would not fill the pool).
  const size_t want = threads * 4;  // tiles wanted in all
  const size_t n_tile = threads == 1 ? round_up(n, p.n_step)
                                     : std::min(round_up(std::max<size_t>(p.n_step, 64), p.n_step),
                                                round_up(ceil_div(n, ceil_div(want, m_tiles)), p.n_step));
  const size_t n_tiles = ceil_div(n, n_tile), tiles = m_tiles * n_tiles;
  auto tile_at = [&](size_t t, MatmulFn fn) {
    const size_t m0 = (t % m_tiles) * m_tile, n0 = (t / m_tiles) * n_tile;
    run_tile(m0, n0, std::min(m_tile, m - m0), std::min(n_tile, n - n0), fn);
  };
  if (twin && tiles > 1 && tiles < (size_t{1} << 31)) {
    return run_hybrid(tiles, sme, [&](size_t t, bool neon) { tile_at(t, neon ? twin : u.run); }, ctx);
  }
  pool.parallel_for(tiles, [&](size_t t, int) { tile_at(t, u.run); });
}

void run_group(std::span<const MatmulPart> parts, Context& ctx, const PackedWeights* next) {
  auto in_stride = [](const MatmulPart& q) { return (q.lhs_stride ? q.lhs_stride : q.w->k()) * sizeof(float); };
  auto out_stride = [](const MatmulPart& q) { return (q.dst_stride ? q.dst_stride : q.w->n()) * sizeof(float); };
  if (std::any_of(parts.begin(), parts.end(), [&](const MatmulPart& q) { return takes_wide(*q.w, q.m, q.lhs, in_stride(q), ctx); })) {
    for (const MatmulPart& q : parts) {  // (rare: one by one, each on the kernel its range or split needs)
      run_matmul(*q.w, q.m, q.lhs, in_stride(q), q.dst, out_stride(q), -INFINITY, INFINITY, ctx, nullptr);
    }
    if (next) prefetch_next(*next, 1, ctx.pool());
    return;
  }
  ThreadPool& pool = ctx.pool();
  // Per product: where its packed rows are, its tiles' size and its first tile in the job
  // (reused buffers, never shrunk; the workers see them through pointers: a thread_local name
  // inside a task would be the worker's own).
  static thread_local std::vector<size_t> lhs_at_v, first_v, cols_v, m_tile_v;
  lhs_at_v.resize(parts.size());
  first_v.resize(parts.size() + 1);
  cols_v.resize(parts.size());
  m_tile_v.resize(parts.size());
  size_t *lhs_at = lhs_at_v.data(), *first = first_v.data(), *cols_of = cols_v.data(), *m_tile = m_tile_v.data();
  size_t lhs_bytes = 0, rows = 0;
  first[0] = 0;
  auto shares_lhs = [&](size_t i) {  // a one-row product packed exactly as the one before it
    if (i == 0 || parts[i].m != 1 || parts[i - 1].m != 1 || parts[i].lhs != parts[i - 1].lhs) return false;
    const PackedWeights &w = *parts[i].w, &v = *parts[i - 1].w;
    const TileParams &p = w.params_for(1), &q = v.params_for(1);
    return w.k() == v.k() && w.kernel_for(1).lhs == v.kernel_for(1).lhs && p.mr == q.mr && p.kr == q.kr && p.sr == q.sr;
  };
  for (size_t i = 0; i < parts.size(); ++i) {
    const PackedWeights& w = *parts[i].w;
    const size_t m = parts[i].m;
    check_arg(m >= 1, "matmul_group: a product without rows");
    check_shape(w.type(), m, w.k(), "activations");
    if (w.svl_bytes() != 0 && w.svl_bytes() != cpu_info().svl_bytes) {
      fail(Status::unsupported, "weights were packed for SVL " + std::to_string(w.svl_bytes() * 8) + " bits, this CPU has " +
                                    std::to_string(cpu_info().svl_bytes * 8));
    }
    const Ukernel& u = w.kernel_for(m);
    const TileParams& p = w.params_for(m);
    lhs_at[i] = shares_lhs(i) ? lhs_at[i - 1] : lhs_bytes;
    if (!shares_lhs(i)) lhs_bytes += round_up(lhs_packed_size(u, p, m, w.k()), 64);
    rows += m;
    m_tile[i] = row_tile(u, p, m, w.k());
    const size_t col_bytes = std::max<size_t>(1, w.bytes() / round_up(w.n(), p.nr));
    const size_t want = m == 1 ? ceil_div(w.chunk_bytes(), col_bytes) : 64;
    cols_of[i] = std::min(round_up(w.n(), p.n_step), round_up(std::max<size_t>(want, 1), p.n_step));
    first[i + 1] = first[i] + ceil_div(m, m_tile[i]) * ceil_div(w.n(), cols_of[i]);
  }
  uint8_t* lhs_packed = ctx.scratch(lhs_bytes);
  auto pack = [&](size_t i, int) {
    if (shares_lhs(i)) return;
    const PackedWeights& w = *parts[i].w;
    const size_t m = parts[i].m, stride = (parts[i].lhs_stride ? parts[i].lhs_stride : w.k()) * sizeof(float);
    const TileParams& p = w.params_for(m);
    w.kernel_for(m).lhs->run(m, w.k(), p.mr, p.kr, p.sr, parts[i].lhs, stride, lhs_packed + lhs_at[i]);
  };
  if (rows <= 16) {  // (a decode step's: not worth waking the pool)
    for (size_t i = 0; i < parts.size(); ++i) pack(i, 0);
  } else {
    pool.parallel_for(parts.size(), pack);
  }
  auto tile_at = [&](size_t t, bool neon) {  // neon: the kernel's NEON twin (the hybrid split)
    const size_t i = static_cast<size_t>(std::upper_bound(first, first + parts.size() + 1, t) - first) - 1;
    const PackedWeights& w = *parts[i].w;
    const size_t m = parts[i].m, k = w.k();
    const size_t m0 = (t - first[i]) % ceil_div(m, m_tile[i]) * m_tile[i], n0 = (t - first[i]) / ceil_div(m, m_tile[i]) * cols_of[i];
    const Ukernel& u = w.kernel_for(m);
    const TileParams& p = w.params_for(m);
    const size_t dst_stride = (parts[i].dst_stride ? parts[i].dst_stride : w.n()) * sizeof(float);
    (neon ? neon_twin(u) : u.run)(std::min(m_tile[i], m - m0), std::min(cols_of[i], w.n() - n0), k,
                                  lhs_packed + lhs_at[i] + lhs_packed_offset(u, p, m0, k), w.data() + rhs_packed_offset(u, p, n0, k),
                                  reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(parts[i].dst) + dst_offset(m0, n0, dst_stride)),
                                  dst_stride, -INFINITY, INFINITY);
  };
  // The hybrid split when every product's kernel has a NEON twin (an MoE layer's experts of one type).
  const int sme = ctx.sme_threads();
  const size_t tiles = first[parts.size()];
  const bool hybrid = sme > 0 && sme < pool.threads() && tiles > 1 && tiles < (size_t{1} << 31) &&
                      std::all_of(parts.begin(), parts.end(), [](const MatmulPart& q) { return neon_twin(q.w->kernel_for(q.m)) != nullptr; });
  if (hybrid) {
    run_hybrid(tiles, sme, tile_at, ctx);
  } else {
    pool.parallel_for(tiles, [&](size_t t, int) { tile_at(t, false); });
  }
  if (next) prefetch_next(*next, 1, pool);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// With a --trace observer installed, each call is timed and reported when it is done (still
// inside the call: a C API context stays in use until the observer returns).
void matmul(const PackedWeights& w, size_t m, const float* lhs, size_t lhs_stride, float* dst, size_t dst_stride,
            float lo, float hi, Context& ctx, const PackedWeights* next) {
  if (m == 0) return;
  if (!g_trace) [[likely]] return run_matmul(w, m, lhs, lhs_stride, dst, dst_stride, lo, hi, ctx, next);
  const auto t0 = std::chrono::steady_clock::now();
  run_matmul(w, m, lhs, lhs_stride, dst, dst_stride, lo, hi, ctx, next);
  g_trace(g_trace_user, w, m, seconds_since(t0));
}

// A group's products run as one job: its time is shared among them in proportion to rows x
// packed weight bytes (the bytes for a decode step's GEMVs, the work for a prefill's GEMMs).
void matmul_group(std::span<const MatmulPart> parts, Context& ctx, const PackedWeights* next) {
  if (parts.empty()) return;
  if (!g_trace) [[likely]] return run_group(parts, ctx, next);
  const auto t0 = std::chrono::steady_clock::now();
  run_group(parts, ctx, next);
  const double seconds = seconds_since(t0);
  double total = 0;
  for (const MatmulPart& q : parts) total += static_cast<double>(q.m) * static_cast<double>(q.w->bytes());
  for (const MatmulPart& q : parts) {
    g_trace(g_trace_user, *q.w, q.m, total > 0 ? seconds * static_cast<double>(q.m) * static_cast<double>(q.w->bytes()) / total : 0.0);
  }
}

}  // namespace qmm
