#include "kernels/model/parallel.h"

#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.h"

namespace ispsim::model {
namespace {

thread_local bool t_in_job = false;  // nested parallel_ranges calls run inline

inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

// A persistent pool. A job is published by bumping `generation_`; workers spin
// briefly (decode issues a few hundred small jobs per token, and a futex wake
// per job would cost more than the job), then sleep on the condition variable.
class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { worker(i + 1); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  void run(int n, int align, void (*fn)(void*, int, int), void* ctx) {
    n_ = n, align_ = align, fn_ = fn, ctx_ = ctx;
    pending_.store(static_cast<int>(threads_.size()));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    run_part(0);
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins)
      if (spins > 4000) sched_yield();
  }

 private:
  void run_part(int part) {
    const int parts = size();
    const int blocks = (n_ + align_ - 1) / align_;
    const int b0 = static_cast<int>(static_cast<long long>(blocks) * part / parts);
    const int b1 = static_cast<int>(static_cast<long long>(blocks) * (part + 1) / parts);
    const int begin = b0 * align_, end = b1 * align_ < n_ ? b1 * align_ : n_;
    if (begin < end) fn_(ctx_, begin, end);
  }

  void worker(int part) {
    t_in_job = true;
    unsigned seen = 0;
    for (;;) {
      unsigned now = generation_.load(std::memory_order_acquire);
      for (int spins = 0; now == seen && spins < 20000; ++spins) {
        cpu_relax();
        now = generation_.load(std::memory_order_acquire);
      }
      if (now == seen) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        now = generation_.load();
      }
      seen = now;
      if (stop_) return;
      run_part(part);
      pending_.fetch_sub(1, std::memory_order_release);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<unsigned> generation_{0};
  std::atomic<int> pending_{0};
  bool stop_ = false;
  int n_ = 0, align_ = 1;
  void (*fn_)(void*, int, int) = nullptr;
  void* ctx_ = nullptr;
};

int g_threads = 1;
std::unique_ptr<Pool> g_pool;
std::mutex g_pool_mutex;  // one parallel job at a time

}  // namespace

void set_engine_threads(int n) {
  if (n < 1 || n > 256) throw BadInput("--threads", "must be between 1 and 256, got " + std::to_string(n));
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_pool.reset();
  g_threads = n;
  if (n > 1) g_pool = std::make_unique<Pool>(n - 1);
}

int engine_threads() { return g_threads; }

void parallel_ranges(int n, int align, void (*fn)(void* ctx, int begin, int end), void* ctx) {
  if (n <= 0) return;
  if (align < 1) align = 1;
  if (g_threads == 1 || t_in_job || n <= align) {
    fn(ctx, 0, n);
    return;
  }
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  t_in_job = true;
  g_pool->run(n, align, fn, ctx);
  t_in_job = false;
}

}  // namespace ispsim::model
