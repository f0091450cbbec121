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
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_impl(void (*fn)(void*, int), void* ctx) {
  if (workers_.empty()) {
    fn(ctx, 0);
    return;
  }
  fn_ = fn;
  ctx_ = ctx;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  fn(ctx, 0);
  for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < kSpinRounds) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::worker(int index) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen;
    for (int spins = 0; (gen = generation_.load(std::memory_order_acquire)) == seen; ++spins) {
      if (spins < kSpinRounds) {
        cpu_relax();
      } else {
        generation_.wait(seen, std::memory_order_acquire);
      }
    }
    seen = gen;
    if (stop_.load(std::memory_order_relaxed)) return;
    fn_(ctx_, index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace qmm
