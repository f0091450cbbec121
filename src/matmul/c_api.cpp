// The C API (include/qmm/qmm.h): validates every argument, catches every exception and turns
// it into a status code plus a per-thread message.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <string>
#include <vector>

#include "core/channels.h"
#include "core/cpu.h"
#include "core/error.h"
#include "kernels/kernel_list.h"
#include "matmul/matmul.h"
#include "qmm/qmm.h"

struct qmm_weights {
  qmm::PackedWeights w;
};
struct qmm_context {
  explicit qmm_context(int threads) : ctx(threads) {}
  qmm::Context ctx;
  std::atomic<bool> busy{false};  // a call is using ctx (one at a time: a second one is an error)
};

namespace {

thread_local std::string g_error;

qmm_status set_error(qmm_status s, const std::string& msg) {
  g_error = msg;
  return s;
}

// Runs f, mapping exceptions to status codes.
template <class F>
qmm_status guarded(F&& f) {
  try {
    g_error.clear();
    f();
    return QMM_OK;
  } catch (const qmm::Error& e) {
    return set_error(static_cast<qmm_status>(e.status()), e.what());
  } catch (const std::bad_alloc&) {
    return set_error(QMM_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return set_error(QMM_ERR_INTERNAL, e.what());
  }
}

// Every check below tests first and builds its message only when it fails: the valid path of a
// per-tile call (qmm_ukernel_run) allocates nothing (tests/arm/count_c_api.cpp bounds it).
void require(bool ok, const char* msg) { qmm::check_arg(ok, msg); }

// Holds a context for one call; a context another thread holds is an error, not a race.
class ContextUse {
 public:
  ContextUse(qmm_context* c, const char* fn) : c_(c) {
    if (c_ && c_->busy.exchange(true, std::memory_order_acquire)) {
      c_ = nullptr;
      qmm::fail(qmm::Status::invalid_argument,
                std::string(fn) + ": the context is in use by another call (one call at a time per context)");
    }
  }
  ~ContextUse() {
    if (c_) c_->busy.store(false, std::memory_order_release);
  }
  ContextUse(const ContextUse&) = delete;
  ContextUse& operator=(const ContextUse&) = delete;

 private:
  qmm_context* c_;
};

bool aligned_for_float(const void* p, size_t stride) {
  return reinterpret_cast<uintptr_t>(p) % alignof(float) == 0 && stride % sizeof(float) == 0;
}

[[noreturn, gnu::cold, gnu::noinline]] void clamp_error(float lo, float hi, const char* fn) {
  qmm::check_arg(!std::isnan(lo) && !std::isnan(hi), std::string(fn) + ": a clamp bound is NaN");
  qmm::fail(qmm::Status::invalid_argument, std::string(fn) + ": clamp_min > clamp_max");
}
inline void check_clamp(float lo, float hi, const char* fn) {
  if (!(lo <= hi)) [[unlikely]] clamp_error(lo, hi, fn);  // false when either is NaN
}

// The type as the caller passed it: any int, validated here (no enum conversion before).
qmm::WeightType to_type(int t) {
  // QMM_TYPE_* are the ids of core/weight_types.h's table: the types the kernels take.
  const qmm::TypeInfo* info = t >= 0 ? qmm::find_type(static_cast<uint32_t>(t)) : nullptr;
  if (info && info->native) return info->type();
  qmm::fail(qmm::Status::unsupported, "unknown weight type " + std::to_string(t));
}

[[noreturn, gnu::cold, gnu::noinline]] void index_error(size_t index) {
  qmm::fail(qmm::Status::invalid_argument, "kernel index " + std::to_string(index) + " out of range (" +
                                               std::to_string(qmm::kernel_list().size()) + " kernels)");
}
inline const qmm::Ukernel& kernel_at(size_t index) {
  const auto list = qmm::kernel_list();
  if (index >= list.size()) [[unlikely]] index_error(index);
  return *list[index];
}

[[noreturn, gnu::cold, gnu::noinline]] void unavailable_error(const qmm::Ukernel& u) {
  qmm::fail(qmm::Status::unsupported,
            std::string(u.name) + " cannot run here: " + qmm::unavailable_reason(u, qmm::cpu_info()));
}
inline void check_available(const qmm::Ukernel& u) {
  if (!qmm::cpu_info().has(qmm::isa_features(u.isa))) [[unlikely]] unavailable_error(u);
}

// qmm_ukernel_run's checks, worked out once per kernel so that a valid per-tile call costs a few
// compares (tests/arm: arm.count_c_api bounds it on every GEMM and GEMV kind): what
// check_available, check_shape and the GEMV's m == 1 rule accept, as limits.
struct RunRule {
  const qmm::Ukernel* u;
  bool runnable;    // this CPU has the kernel's ISA
  size_t max_m;     // 1 for a GEMV, else kMaxDim
  size_t k_mask;    // k & k_mask must be 0: block_len - 1 (block lengths are powers of two)
  size_t max_k;     // kMaxChannelK for the per-channel types (exact int32 sums), else kMaxDim
};

// run_rules(), published by the first qmm_ukernel_run (null until then).
std::atomic<const RunRule*> g_run_rules{nullptr};
std::atomic<size_t> g_run_rule_count{0};  // stored before g_run_rules is published

const std::vector<RunRule>& run_rules() {
  static const std::vector<RunRule> rules = [] {
    std::vector<RunRule> r;
    for (const qmm::Ukernel* u : qmm::kernel_list()) {
      const size_t block = qmm::block_len(u->type);
      r.push_back({u, qmm::cpu_info().has(qmm::isa_features(u->isa)), u->gemv ? 1 : qmm::kMaxDim,
                   (block & (block - 1)) == 0 ? block - 1 : ~size_t{0},  // not a power of two: the full checks
                   qmm::is_channel_type(u->type) ? qmm::kMaxChannelK : qmm::kMaxDim});
    }
    return r;
  }();
  return rules;
}

// True when every check of check_run_args passes (sizes 1..limit: x - 1 < limit, unsigned).
inline bool run_args_ok(const RunRule& r, size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed,
                        const float* dst, size_t dst_stride_row, float clamp_min, float clamp_max) {
  size_t dst_bytes;
  return r.runnable && (m - 1 < r.max_m) && (n - 1 < qmm::kMaxDim) && (k - 1 < r.max_k) && ((k & r.k_mask) == 0) &&
         (std::max(m, n) * k <= qmm::kMaxElements) && (lhs_packed != nullptr) && (rhs_packed != nullptr) &&
         (dst != nullptr) && (dst_stride_row >= n * sizeof(float)) &&
         ((reinterpret_cast<uintptr_t>(dst) | dst_stride_row) % alignof(float) == 0) &&
         !__builtin_mul_overflow(m, dst_stride_row, &dst_bytes) && (clamp_min <= clamp_max);
}

// The same checks one by one, throwing the first failure's message (the first call and failing ones).
[[gnu::noinline]] void check_run_args(size_t index, size_t m, size_t n, size_t k, const void* lhs_packed,
                                      const void* rhs_packed, const float* dst, size_t dst_stride_row, float clamp_min,
                                      float clamp_max) {
  const qmm::Ukernel& u = kernel_at(index);
  check_available(u);
  qmm::check_shape(u.type, n, k, "qmm_ukernel_run: weights");
  qmm::check_shape(u.type, m, k, "qmm_ukernel_run: activations");
  require(!u.gemv || m == 1, "qmm_ukernel_run: a GEMV variant takes m == 1 only");
  require(lhs_packed && rhs_packed && dst, "qmm_ukernel_run: null pointer");
  require(dst_stride_row >= n * sizeof(float), "qmm_ukernel_run: dst_stride_row is smaller than n floats");
  require(aligned_for_float(dst, dst_stride_row), "qmm_ukernel_run: dst and dst_stride_row must be multiples of 4 bytes");
  size_t dst_bytes;
  require(!__builtin_mul_overflow(m, dst_stride_row, &dst_bytes), "qmm_ukernel_run: m x dst_stride_row: size overflows");
  check_clamp(clamp_min, clamp_max, "qmm_ukernel_run");
}

// qmm_ukernel_run's first call and every failing one: builds and publishes the table, then the
// checks one by one (the first failure's message), then the kernel, all under guarded.
[[gnu::noinline]] qmm_status run_checked(size_t index, size_t m, size_t n, size_t k, const void* lhs_packed,
                                         const void* rhs_packed, float* dst, size_t dst_stride_row, float clamp_min,
                                         float clamp_max) {
  return guarded([&] {
    const std::vector<RunRule>& rules = run_rules();
    if (!g_run_rules.load(std::memory_order_acquire)) {
      g_run_rule_count.store(rules.size(), std::memory_order_relaxed);
      g_run_rules.store(rules.data(), std::memory_order_release);
    }
    check_run_args(index, m, n, k, lhs_packed, rhs_packed, dst, dst_stride_row, clamp_min, clamp_max);
    rules[index].u->run(m, n, k, lhs_packed, rhs_packed, dst, dst_stride_row, clamp_min, clamp_max);
  });
}

// Size/offset getters answer 0 for a bad index, a kernel that cannot run here or a bad or
// overflowing shape, with qmm_last_error() saying which.
template <class F>
size_t getter(size_t index, F f) {
  size_t r = 0;
  guarded([&] {
    const qmm::Ukernel& u = kernel_at(index);
    check_available(u);
    r = f(u, qmm::kernel_params(u));
  });
  return r;
}

// The pack options' filter and pool, then PackedWeights::pack under the options' context.
qmm_weights* pack_with_options(qmm::WeightType t, size_t n, size_t k, const void* data, const qmm_pack_options* options,
                               const char* fn) {
  qmm::KernelFilter filter = qmm::kernel_filter_from_env();
  qmm::ThreadPool* pool = nullptr;
  if (options) {
    filter = qmm::merge(filter, qmm::parse_kernel_filter(options->kernels ? options->kernels : "",
                                                         options->disable ? options->disable : "",
                                                         "qmm_pack_options"));
    if (options->context) pool = &options->context->ctx.pool();
  }
  const ContextUse use(options ? options->context : nullptr, fn);
  return new qmm_weights{qmm::PackedWeights::pack(t, n, k, data, filter, pool)};
}

}  // namespace

extern "C" {

const char* qmm_version(void) { return "0.1.0"; }

const char* qmm_cpu_info(void) {
  static const std::string s = [] {
    const auto& c = qmm::cpu_info();
    std::string r = c.arch + (c.brand.empty() ? "" : " " + c.brand) + "; features: " + qmm::feature_names(c.features);
    if (c.svl_bytes) r += "; SVL " + std::to_string(c.svl_bytes * 8) + " bits";
    return r;
  }();
  return s.c_str();
}

const char* qmm_last_error(void) { return g_error.c_str(); }

qmm_status qmm_weights_pack(int type, size_t n, size_t k, const void* data, const qmm_pack_options* options,
                            qmm_weights** out) {
  return guarded([&] {
    require(out != nullptr, "qmm_weights_pack: out is null");
    *out = nullptr;
    require(data != nullptr, "qmm_weights_pack: data is null");
    *out = pack_with_options(to_type(type), n, k, data, options, "qmm_weights_pack");
  });
}

qmm_status qmm_weights_pack_f32(int type, size_t n, size_t k, const float* weights, const float* bias,
                                const qmm_pack_options* options, qmm_weights** out) {
  return guarded([&] {
    require(out != nullptr, "qmm_weights_pack_f32: out is null");
    *out = nullptr;
    require(weights != nullptr, "qmm_weights_pack_f32: weights are null");
    require(aligned_for_float(weights, 0) && aligned_for_float(bias, 0),
            "qmm_weights_pack_f32: weights and bias must be aligned to 4 bytes");
    const qmm::WeightType t = to_type(type);
    if (!qmm::is_channel_type(t)) {
      qmm::fail(qmm::Status::unsupported, std::string("qmm_weights_pack_f32 takes QMM_TYPE_QC8 or QMM_TYPE_QC4, not ") +
                                              qmm::type_name(t));
    }
    qmm::check_shape(t, n, k, "qmm_weights_pack_f32");  // before sizing the rows
    const size_t rb = qmm::row_bytes(t, k);
    std::vector<uint8_t> rows(n * rb);
    for (size_t j = 0; j < n; ++j) {
      const float b = bias ? bias[j] : 0.0f;
      if (t == qmm::WeightType::qc8) {
        qmm::quantize_row_qc8(weights + j * k, b, rows.data() + j * rb, k);
      } else {
        qmm::quantize_row_qc4(weights + j * k, b, rows.data() + j * rb, k);
      }
    }
    *out = pack_with_options(t, n, k, rows.data(), options, "qmm_weights_pack_f32");
  });
}

const char* qmm_weights_kernel(const qmm_weights* w, int gemv) {
  if (!w) return nullptr;
  return gemv ? w->w.gemv().name : w->w.gemm().name;
}

size_t qmm_weights_packed_bytes(const qmm_weights* w) { return w ? w->w.bytes() : 0; }

void qmm_weights_free(qmm_weights* w) { delete w; }

qmm_status qmm_context_create(int threads, qmm_context** out) {
  return guarded([&] {
    require(out != nullptr, "qmm_context_create: out is null");
    *out = nullptr;
    qmm::check_arg(threads >= 1 && threads <= 1024,
                   "qmm_context_create: threads must be in 1..1024, got " + std::to_string(threads));
    *out = new qmm_context(threads);
  });
}

void qmm_context_free(qmm_context* c) {
  if (!c) return;
  // Freeing a context another thread is using is the caller's bug; wait for that call to end
  // rather than pull its thread pool from under it.
  while (c->busy.load(std::memory_order_acquire)) std::this_thread::yield();
  delete c;
}

qmm_status qmm_matmul(const qmm_weights* w, size_t m, const float* lhs, size_t lhs_stride, float* dst,
                      size_t dst_stride, float clamp_min, float clamp_max, qmm_context* ctx) {
  return guarded([&] {
    require(w != nullptr, "qmm_matmul: weights are null");
    require(lhs != nullptr && dst != nullptr, "qmm_matmul: lhs or dst is null");
    require(m > 0, "qmm_matmul: m must be > 0");
    require(lhs_stride >= w->w.k() * sizeof(float), "qmm_matmul: lhs_stride is smaller than k floats");
    require(dst_stride >= w->w.n() * sizeof(float), "qmm_matmul: dst_stride is smaller than n floats");
    require(aligned_for_float(lhs, lhs_stride) && aligned_for_float(dst, dst_stride),
            "qmm_matmul: lhs, dst and their strides must be multiples of 4 bytes");
    check_clamp(clamp_min, clamp_max, "qmm_matmul");
    qmm::check_shape(w->w.type(), m, w->w.k(), "qmm_matmul: activations");
    qmm::checked_mul(m, lhs_stride, "qmm_matmul: m x lhs_stride");
    qmm::checked_mul(m, dst_stride, "qmm_matmul: m x dst_stride");
    static thread_local qmm::Context solo(1);
    const ContextUse use(ctx, "qmm_matmul");
    qmm::matmul(w->w, m, lhs, lhs_stride, dst, dst_stride, clamp_min, clamp_max, ctx ? ctx->ctx : solo);
  });
}

size_t qmm_ukernel_count(void) { return qmm::kernel_list().size(); }

qmm_status qmm_ukernel_get(size_t index, qmm_ukernel_info* out) {
  return guarded([&] {
    require(out != nullptr, "qmm_ukernel_get: out is null");
    const qmm::Ukernel& u = kernel_at(index);
    const bool avail = qmm::unavailable_reason(u, qmm::cpu_info()).empty();
    // SME parameters read the vector length, which only an SME CPU has.
    const qmm::TileParams p = avail ? qmm::kernel_params(u) : qmm::TileParams{};
    *out = qmm_ukernel_info{u.name,         qmm::isa_name(u.isa), u.lhs->name, u.rhs->name,
                            static_cast<qmm_type>(u.type), u.gemv ? 1 : 0, avail ? 1 : 0,
                            p.mr, p.nr, p.kr, p.sr, p.m_step, p.n_step};
  });
}

qmm_status qmm_ukernel_find(const char* name, size_t* index) {
  return guarded([&] {
    require(name != nullptr && index != nullptr, "qmm_ukernel_find: null argument");
    const auto list = qmm::kernel_list();
    for (size_t i = 0; i < list.size(); ++i) {
      if (std::strcmp(list[i]->name, name) == 0) {
        *index = i;
        return;
      }
    }
    if (const char* why = qmm::retired_kernel_name(name)) {
      qmm::fail(qmm::Status::invalid_argument, std::string("qmm_ukernel_find: '") + name + "' " + why);
    }
    qmm::fail(qmm::Status::invalid_argument, std::string("qmm_ukernel_find: no kernel named '") + name + "'");
  });
}

size_t qmm_ukernel_lhs_packed_size(size_t index, size_t m, size_t k) {
  return getter(index, [&](const qmm::Ukernel& u, const qmm::TileParams& p) {
    qmm::check_shape(u.type, m, k, "qmm_ukernel_lhs_packed_size");
    return qmm::lhs_packed_size(u, p, m, k);
  });
}
size_t qmm_ukernel_lhs_packed_offset(size_t index, size_t m_idx, size_t k) {
  return getter(index, [&](const qmm::Ukernel& u, const qmm::TileParams& p) {
    qmm::check_shape(u.type, 1, k, "qmm_ukernel_lhs_packed_offset");
    qmm::check_panel_start(m_idx, k);
    return qmm::lhs_packed_offset(u, p, m_idx, k);
  });
}
size_t qmm_ukernel_rhs_packed_size(size_t index, size_t n, size_t k) {
  return getter(index, [&](const qmm::Ukernel& u, const qmm::TileParams& p) {
    qmm::check_shape(u.type, n, k, "qmm_ukernel_rhs_packed_size");
    return qmm::rhs_packed_size(u, p, n, k);
  });
}
size_t qmm_ukernel_rhs_packed_offset(size_t index, size_t n_idx, size_t k) {
  return getter(index, [&](const qmm::Ukernel& u, const qmm::TileParams& p) {
    qmm::check_shape(u.type, 1, k, "qmm_ukernel_rhs_packed_offset");
    qmm::check_panel_start(n_idx, k);
    return qmm::rhs_packed_offset(u, p, n_idx, k);
  });
}

qmm_status qmm_ukernel_pack_lhs(size_t index, size_t m, size_t k, const float* lhs, size_t lhs_stride,
                                void* lhs_packed) {
  return guarded([&] {
    const qmm::Ukernel& u = kernel_at(index);
    check_available(u);
    qmm::check_shape(u.type, m, k, "qmm_ukernel_pack_lhs");
    require(lhs != nullptr && lhs_packed != nullptr, "qmm_ukernel_pack_lhs: null pointer");
    require(lhs_stride >= k * sizeof(float), "qmm_ukernel_pack_lhs: lhs_stride is smaller than k floats");
    require(aligned_for_float(lhs, lhs_stride), "qmm_ukernel_pack_lhs: lhs and lhs_stride must be multiples of 4 bytes");
    qmm::checked_mul(m, lhs_stride, "qmm_ukernel_pack_lhs: m x lhs_stride");
    const qmm::TileParams p = qmm::kernel_params(u);
    u.lhs->run(m, k, p.mr, p.kr, p.sr, lhs, lhs_stride, lhs_packed);
  });
}

qmm_status qmm_ukernel_pack_rhs(size_t index, size_t n, size_t k, const void* rhs, void* rhs_packed) {
  return guarded([&] {
    const qmm::Ukernel& u = kernel_at(index);
    check_available(u);
    qmm::check_shape(u.type, n, k, "qmm_ukernel_pack_rhs");
    require(rhs != nullptr && rhs_packed != nullptr, "qmm_ukernel_pack_rhs: null pointer");
    const qmm::TileParams p = qmm::kernel_params(u);
    std::memset(rhs_packed, 0, qmm::rhs_packed_size(u, p, n, k));
    u.rhs->run(n, k, p.nr, p.kr, p.sr, rhs, rhs_packed);
  });
}

qmm_status qmm_ukernel_run(size_t index, size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed,
                           float* dst, size_t dst_stride_row, float clamp_min, float clamp_max) {
  // The valid path: the table's compares, then the kernel (which never throws) outside any try.
  const RunRule* rules = g_run_rules.load(std::memory_order_acquire);
  if (!rules || index >= g_run_rule_count.load(std::memory_order_relaxed) ||
      !run_args_ok(rules[index], m, n, k, lhs_packed, rhs_packed, dst, dst_stride_row, clamp_min, clamp_max))
      [[unlikely]] {
    return run_checked(index, m, n, k, lhs_packed, rhs_packed, dst, dst_stride_row, clamp_min, clamp_max);
  }
  g_error.clear();
  rules[index].u->run(m, n, k, lhs_packed, rhs_packed, dst, dst_stride_row, clamp_min, clamp_max);
  return QMM_OK;
}

}  // extern "C"
