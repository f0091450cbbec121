#include "core/thread_pool.h"

#include "core/error.h"

namespace qmm {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

// Spin this many rounds before sleeping: decode issues many short matmuls back to back.
constexpr int kSpinRounds = 1 << 14;

}  // namespace

ThreadPool::ThreadPool(int threads) {
  check_arg(threads >= 1 && threads <= 1024, "thread count must be in 1..1024, got " + std::to_string(threads));
  idle_ = std::make_unique<IdlePrefetch[]>(static_cast<size_t>(threads));
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_impl(void (*fn)(void*, int), void* ctx, bool every) {
  if (workers_.empty()) {
    fn(ctx, 0);
    return;
  }
  fn_ = fn;
  ctx_ = ctx;
  const uint32_t gen = generation_.load(std::memory_order_relaxed) + 1;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  job_.store(uint64_t{gen} << 32 | (every ? kEvery : 0), std::memory_order_relaxed);
  generation_.store(gen, std::memory_order_release);
  generation_.notify_all();
  fn(ctx, 0);
  // run: wait for every worker. parallel_for: close the job to latecomers (the caller has
  // seen every task taken), then wait for the workers inside it.
  if (!every) job_.fetch_or(kClosed, std::memory_order_acq_rel);
  auto finished = [&] {
    return every ? pending_.load(std::memory_order_acquire) == 0
                 : (job_.load(std::memory_order_acquire) & kCount) == 0;
  };
  for (int spins = 0; !finished(); ++spins) {
    if (spins < kSpinRounds) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::prefetch_while_idle(int thread, const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (thread < 1 || thread >= threads()) return;
  IdlePrefetch& h = idle_[static_cast<size_t>(thread)];
  h.begin[0].store(reinterpret_cast<uintptr_t>(a), std::memory_order_relaxed);
  h.end[0].store(reinterpret_cast<uintptr_t>(a) + a_bytes, std::memory_order_relaxed);
  h.begin[1].store(reinterpret_cast<uintptr_t>(b), std::memory_order_relaxed);
  h.end[1].store(reinterpret_cast<uintptr_t>(b) + b_bytes, std::memory_order_relaxed);
  h.seq.fetch_add(1, std::memory_order_release);
}

void ThreadPool::worker(int index) {
  uint32_t seen = 0;
  IdlePrefetch& hint = idle_[static_cast<size_t>(index)];
  uint64_t hint_seen = 0;
  uintptr_t next[2] = {}, end[2] = {};  // the parts of the hint still to prefetch
  for (;;) {
    uint32_t gen;
    for (int spins = 0; (gen = generation_.load(std::memory_order_acquire)) == seen; ++spins) {
      if (const uint64_t s = hint.seq.load(std::memory_order_acquire); s != hint_seen) {
        hint_seen = s;
        for (int r = 0; r < 2; ++r) {
          next[r] = hint.begin[r].load(std::memory_order_relaxed);
          end[r] = hint.end[r].load(std::memory_order_relaxed);
        }
      }
      if (const int r = next[0] < end[0] ? 0 : 1; next[r] < end[r]) {
        __builtin_prefetch(reinterpret_cast<const void*>(next[r]), 0, 2);
        next[r] += 64;
        spins = 0;
        continue;
      }
      if (spins < kSpinRounds) {
        cpu_relax();
      } else {
        generation_.wait(seen, std::memory_order_acquire);
      }
    }
    seen = gen;
    if (stop_.load(std::memory_order_relaxed)) return;
    uint64_t j = job_.load(std::memory_order_acquire);
    if ((j >> 32) == gen && (j & kEvery)) {  // run: the caller waits for this worker
      fn_(ctx_, index);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
      continue;
    }
    // parallel_for: join job `gen` unless it is closed or over (the caller may already be in
    // a newer one, which this loop sees next).
    bool joined = false;
    while (!joined && (j >> 32) == gen && !(j & kClosed)) {
      joined = job_.compare_exchange_weak(j, j + 1, std::memory_order_acq_rel, std::memory_order_acquire);
    }
    if (!joined) continue;
    fn_(ctx_, index);
    job_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace qmm
