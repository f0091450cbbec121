// The matmul layer: weights packed once, then dst = clamp(lhs · Wᵀ) with the selected
// microkernels, threaded by a persistent pool (docs/design.md §1, §6).
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/thread_pool.h"
#include "kernels/ukernel.h"
#include "matmul/select.h"

namespace qmm {

// A thread pool plus the scratch a matmul needs (packed LHS). One matmul at a time per
// context; scratch grows to the largest call and is then reused (no allocation per call).
class Context {
 public:
  explicit Context(int threads = 1) : own_(std::make_unique<ThreadPool>(threads)), pool_(own_.get()) {}
  // Borrows `pool` (it must outlive the context): the model loader's tuning runs on the pool
  // the model will run on.
  explicit Context(ThreadPool& pool) : pool_(&pool) {}
  ThreadPool& pool() { return *pool_; }
  int threads() const { return pool_->threads(); }
  uint8_t* scratch(size_t bytes) {
    lhs_.reserve(bytes);
    return lhs_.data();
  }

  // Hybrid SME + NEON (docs/design.md §6): where the SME unit is shared by several cores, at most
  // `threads` of this context's threads (the caller first) run a GEMM's SME2 tiles and the
  // others its NEON twin (kernels/kernel_list.h neon_twin: same packed operands, same bits).
  // 0, the default, runs SME2 on every thread; QMM_SME_THREADS sets the default of new contexts.
  // A GEMM without a twin whose wide-range GEMM (PackedWeights::wide) has one — the F16-activation
  // Q4_0 GEMM — leaves a call asked to split to that GEMM.
  void set_sme_threads(int threads);
  int sme_threads() const { return sme_threads_; }
  // Tiles of the last hybrid matmul run by the NEON twin, and the twin's measured time per tile
  // over the SME2 kernel's (measured once per context on the first hybrid matmul's first tile).
  size_t last_neon_tiles() const { return last_neon_tiles_; }
  double neon_sme_ratio() const { return neon_sme_ratio_; }
  void record_hybrid(size_t neon_tiles, double ratio) {  // by matmul
    last_neon_tiles_ = neon_tiles;
    neon_sme_ratio_ = ratio;
  }

 private:
  std::unique_ptr<ThreadPool> own_;
  ThreadPool* pool_;
  AlignedBuffer lhs_;
  int sme_threads_ = sme_threads_from_env();
  size_t last_neon_tiles_ = 0;
  double neon_sme_ratio_ = 0.0;  // 0: not measured yet
  static int sme_threads_from_env();
};

// How a decode step (m = 1) runs over a weight: which GEMV (one reading the GEMM's packed
// RHS) and the smallest column chunk a thread grabs, in bytes of packed weights. The default
// is select_kernels' GEMV and kDefaultChunkBytes; matmul/tune.h may measure a better one.
struct DecodePlan {
  static constexpr size_t kDefaultChunkBytes = size_t{256} << 10;
  const Ukernel* gemv = nullptr;
  size_t chunk_bytes = kDefaultChunkBytes;
  bool measured = false;  // chosen by the tuner (measured here or read from its cache)
};

class PackedWeights {
 public:
  // Packs GGUF rows [n, k] of `type` for the kernels `filter` and this CPU select.
  // `pool` (optional) packs in parallel. huge_pages: the packed bytes on 2 MiB pages where the
  // OS gives them (advise_huge_pages: faster decode, slower packing); false for weights that
  // move to a pack-cache mapping right after the load.
  static PackedWeights pack(WeightType type, size_t n, size_t k, const void* data, const KernelFilter& filter,
                            ThreadPool* pool = nullptr, bool huge_pages = true);
  // Packs with an explicit kernel pair (tests, benchmarks); gemv may equal gemm.
  static PackedWeights pack_with(const Ukernel& gemm, const Ukernel& gemv, size_t n, size_t k, const void* data,
                                 ThreadPool* pool = nullptr, bool huge_pages = true);
  // Weights packed earlier by `gemm`'s packer, `bytes` at `data` (64-byte aligned), kept alive
  // by `owner` (a pack-cache mapping): checks the size the packer gives for [n, k].
  static PackedWeights adopt(const Ukernel& gemm, const Ukernel& gemv, size_t n, size_t k, const uint8_t* data,
                             size_t bytes, std::shared_ptr<const void> owner);

  WeightType type() const { return gemm_->type; }
  size_t n() const { return n_; }
  size_t k() const { return k_; }
  const Ukernel& gemm() const { return *gemm_; }
  const Ukernel& gemv() const { return *gemv_; }
  // The kernel of an m-row call: the GEMV for one row; for 2..few_rows_max_ rows the GEMV's
  // few-row GEMM twin (Ukernel::few_rows) where the GEMM serving them is the one it twins; else
  // the tier's GEMM (few rows) or the GEMM.
  const Ukernel& kernel_for(size_t m) const {
    if (m == 1) return *gemv_;
    if (m > 1 && m <= few_rows_max_) return *gemv_->few_rows;
    const std::optional<size_t> i = tier(m);
    return i ? *few_[*i].gemm : *gemm_;
  }
  const TileParams& params_for(size_t m) const {
    if (m == 1) return gemv_params_;
    if (m > 1 && m <= few_rows_max_) return few_rows_params_;
    const std::optional<size_t> i = tier(m);
    return i ? few_params_[*i] : gemm_params_;
  }
  // The GEMMs for 1 < m < few[i].below rows (KernelPair::few): each must read this GEMM's packed
  // RHS and serve fewer rows than the tier before it; no tier: the GEMM serves every m > 1.
  void set_few_rows(const std::array<FewRows, 2>& few);
  const std::array<FewRows, 2>& few_rows() const { return few_; }
  // The GEMM for m > 1 rows whose activations leave the range of kernel_for(m)'s LHS packer
  // (KernelPair::wide): must read this GEMM's packed RHS and hold every finite value.
  void set_wide(const Ukernel* wide);
  const Ukernel* wide() const { return wide_; }
  const TileParams& wide_params() const { return wide_params_; }
  const uint8_t* data() const { return owner_ ? ext_ : buf_.data(); }
  size_t bytes() const { return owner_ ? ext_bytes_ : buf_.size(); }
  bool mapped() const { return owner_ != nullptr; }  // adopted bytes (not this object's buffer)
  // The decode plan; set_decode_plan throws unless plan.gemv reads this GEMM's packed RHS.
  DecodePlan decode_plan() const { return {gemv_, chunk_bytes_, measured_}; }
  void set_decode_plan(const DecodePlan& plan);
  size_t chunk_bytes() const { return chunk_bytes_; }
  size_t svl_bytes() const { return svl_bytes_; }  // SVL the weights were packed for (0: not SME)

 private:
  // Weights of n x k for this kernel pair, with no bytes yet: what pack_with and adopt share.
  static PackedWeights with_kernels(const Ukernel& gemm, const Ukernel& gemv, size_t n, size_t k);

  const Ukernel* gemm_ = nullptr;
  const Ukernel* gemv_ = nullptr;
  // The narrowest tier whose rows hold m (an index into few_), if any.
  std::optional<size_t> tier(size_t m) const {
    for (size_t i = few_.size(); i-- > 0;) {
      if (few_[i].gemm && m < few_[i].below) return i;
    }
    return std::nullopt;
  }

  // Where kernel_for takes the GEMV's few-row twin: rows 2..few_rows_max_ (0: nowhere).
  void update_few_rows();

  TileParams gemm_params_{}, gemv_params_{}, few_rows_params_{};
  size_t few_rows_max_ = 0;
  std::array<FewRows, 2> few_{};
  std::array<TileParams, 2> few_params_{};
  const Ukernel* wide_ = nullptr;
  TileParams wide_params_{};
  size_t n_ = 0, k_ = 0, svl_bytes_ = 0;
  size_t chunk_bytes_ = DecodePlan::kDefaultChunkBytes;
  bool measured_ = false;
  AlignedBuffer buf_;
  const uint8_t* ext_ = nullptr;  // adopted bytes, kept alive by owner_
  size_t ext_bytes_ = 0;
  std::shared_ptr<const void> owner_;
};

// Validates a (type, rows, k) shape of weights or activations (`what`): rows, k in 1..kMaxDim,
// rows·k <= kMaxElements (ukernel.h), k a multiple of 32 for block types; throws a readable
// qmm::Error (invalid_argument) otherwise.
bool shape_ok(WeightType type, size_t rows, size_t k);  // what check_shape accepts, no message
void check_shape(WeightType type, size_t rows, size_t k, const char* what);
inline void check_weight_shape(WeightType type, size_t n, size_t k) { check_shape(type, n, k, "weights"); }
// Validates a panel start (row m_idx or n_idx) for offsets into a buffer of rows of k elements.
void check_panel_start(size_t idx, size_t k);

// dst[m, n] = clamp(lhs[m, k] · Wᵀ, lo, hi). Strides in bytes. Bitwise identical for any
// thread count of `ctx`. `next` (optional): the weights the caller multiplies next with as many
// rows; idle workers prefetch the start of their part of it meanwhile (decode steps).
void matmul(const PackedWeights& w, size_t m, const float* lhs, size_t lhs_stride, float* dst, size_t dst_stride,
            float lo, float hi, Context& ctx, const PackedWeights* next = nullptr);

// One product of matmul_group: dst[m, w.n()) = lhs[m, w.k()) · Wᵀ, row strides in floats
// (0: w.k() for lhs, w.n() for dst).
struct MatmulPart {
  const PackedWeights* w = nullptr;
  size_t m = 1;
  const float* lhs = nullptr;
  float* dst = nullptr;
  size_t lhs_stride = 0, dst_stride = 0;
};

// Several products at once (a Mixture-of-Experts layer: each chosen expert over its rows): their
// activations are packed (once for consecutive one-row products of one input and LHS packer),
// then the tiles of all of them go to the pool as one job, so the threads meet twice instead of
// twice per weight. A one-row product is cut into chunks of its decode plan's size, a larger one
// into row tiles by 64 columns. Each product's bits are those matmul() gives it (a tile's result
// does not depend on the tiling). `next` as for matmul.
void matmul_group(std::span<const MatmulPart> parts, Context& ctx, const PackedWeights* next = nullptr);

// The column grabs of an m-row matmul of w that fits one row tile, under `threads` threads, in
// the order they are taken (each free thread takes the next): for tests and tools.
std::vector<size_t> column_grabs(const PackedWeights& w, size_t m, size_t threads);

// Observer for `--trace`: called once per matmul when it is done, with the weights (their packer
// and kernel for m rows) and the call's wall time (a matmul_group's shared among its products in
// proportion to rows x packed bytes). Installing one times every call; none costs one branch.
using MatmulTraceFn = void (*)(void* user, const PackedWeights& w, size_t m, double seconds);
void set_matmul_trace(MatmulTraceFn fn, void* user);

}  // namespace qmm
