// A persistent thread pool: workers are started once and woken per job (no thread creation
// per matmul). The caller takes part as thread 0. Jobs must not throw.
#pragma once
#include <atomic>
#include <cstddef>
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

  // Calls f(thread_index) once on every thread, returns when all have finished.
  template <class F>
  void run(F&& f) {
    run_impl([](void* ctx, int t) { (*static_cast<F*>(ctx))(t); }, &f);
  }

  // Calls f(task, thread_index) for task = 0..count-1, handed out dynamically (an atomic
  // counter), so faster cores take more tasks.
  template <class F>
  void parallel_for(size_t count, F&& f) {
    if (count == 0) return;
    if (threads() == 1 || count == 1) {
      for (size_t i = 0; i < count; ++i) f(i, 0);
      return;
    }
    std::atomic<size_t> next{0};
    run([&](int t) {
      for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) f(i, t);
    });
  }

 private:
  void run_impl(void (*fn)(void*, int), void* ctx);
  void worker(int index);

  std::vector<std::thread> workers_;
  void (*fn_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace qmm
