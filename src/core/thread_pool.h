// A persistent thread pool: workers are started once and woken per job (no thread creation
// per matmul). The caller takes part as thread 0. Jobs must not throw.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace qmm {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads >= 1 (1: everything runs on the caller)
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // A hint for worker `thread` (1..threads()-1): while it waits for the next job, prefetch
  // [a, a + a_bytes) and then [b, b + b_bytes) into L2, a cache line at a time between checks
  // for the job (what the next job will read first: a decode step's DRAM otherwise idles
  // between matmuls). A newer hint replaces an older one; prefetches never fault, so a stale
  // range costs only bandwidth.
  void prefetch_while_idle(int thread, const void* a, size_t a_bytes, const void* b = nullptr, size_t b_bytes = 0);

  // Calls f(thread_index) once on every thread, returns when all have finished.
  template <class F>
  void run(F&& f) {
    run_impl([](void* ctx, int t) { (*static_cast<F*>(ctx))(t); }, &f);
  }

  // Calls f(task, thread_index) for task = 0..count-1, handed out dynamically (an atomic
  // counter), so faster cores take more tasks. The caller works too and waits only for the
  // workers that joined before it ran out of tasks: a worker whose core another process
  // holds is not waited for (it finds the job closed when it gets to run).
  template <class F>
  void parallel_for(size_t count, F&& f) {
    if (count == 0) return;
    if (threads() == 1 || count == 1) {
      for (size_t i = 0; i < count; ++i) f(i, 0);
      return;
    }
    std::atomic<size_t> next{0};
    auto body = [&](int t) {
      for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) f(i, t);
    };
    run_impl([](void* ctx, int t) { (*static_cast<decltype(body)*>(ctx))(t); }, &body, false);
  }

 private:
  // Starts job fn(ctx, thread) on the workers and runs it on the caller as thread 0. every:
  // each worker runs it once (run); else workers join while the job is open (parallel_for).
  void run_impl(void (*fn)(void*, int), void* ctx, bool every = true);
  void worker(int index);

  // job_: the generation in the high 32 bits, then kClosed and kEvery (a run job), and in
  // the low bits the count of workers inside a parallel_for job. A run job counts the
  // workers still to finish in pending_.
  static constexpr uint64_t kClosed = uint64_t{1} << 31, kEvery = uint64_t{1} << 30, kCount = kEvery - 1;

  struct alignas(64) IdlePrefetch {  // written by the caller, read by one worker
    std::atomic<uint64_t> seq{0};
    std::atomic<uintptr_t> begin[2]{}, end[2]{};
  };
  std::unique_ptr<IdlePrefetch[]> idle_;  // [threads]
  std::vector<std::thread> workers_;
  void (*fn_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  std::atomic<uint32_t> generation_{0};
  std::atomic<uint64_t> job_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace qmm
