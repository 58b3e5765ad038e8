#include "kernels/model/parallel.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
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

// A persistent pool. A job is cut into fixed chunks (their bounds depend only
// on n, align and the thread count); the caller and the workers claim chunks
// from an atomic counter, so a worker the OS has not scheduled yet does not
// hold the job up: the caller computes its chunks instead. Which thread
// computes a chunk does not change its numbers.
// A job is published by bumping `generation_`; workers spin briefly (decode
// issues a few hundred small jobs per token, and a futex wake per job would cost
// more than the job), then sleep on the condition variable.
class Pool {
 public:
  explicit Pool(int workers) : chunks_(4 * (workers + 1)) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { worker(); });
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
    done_.store(0);
    unsigned gen = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      gen = generation_.load() + 1;
      // The job's fields above are published by this release store: a worker
      // only runs chunks whose claim word carries the generation it woke for.
      claim_.store(static_cast<uint64_t>(gen) << 32, std::memory_order_release);
      generation_.store(gen);
    }
    if (sleeping_.load() > 0) wake_.notify_all();
    work(gen);
    for (int spins = 0; done_.load(std::memory_order_acquire) != chunks_; ++spins)
      if (spins > 2000) sched_yield();
  }

 private:
  // Claims and runs chunks of job `gen` until none is left (or the job is over).
  void work(unsigned gen) {
    for (;;) {
      uint64_t word = claim_.load(std::memory_order_acquire);
      if (static_cast<unsigned>(word >> 32) != gen) return;
      const int c = static_cast<int>(word & 0xFFFFFFFFu);
      if (c >= chunks_) return;
      if (!claim_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel)) continue;
      const int blocks = (n_ + align_ - 1) / align_;
      const int b0 = static_cast<int>(static_cast<long long>(blocks) * c / chunks_);
      const int b1 = static_cast<int>(static_cast<long long>(blocks) * (c + 1) / chunks_);
      const int begin = b0 * align_, end = std::min(n_, b1 * align_);
      if (begin < end) fn_(ctx_, begin, end);
      done_.fetch_add(1, std::memory_order_release);
    }
  }

  void worker() {
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
        sleeping_.fetch_add(1);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        sleeping_.fetch_sub(1);
        now = generation_.load();
      }
      seen = now;
      if (stop_) return;
      work(seen);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<unsigned> generation_{0};
  std::atomic<uint64_t> claim_{0};  // generation << 32 | next chunk
  std::atomic<int> done_{0}, sleeping_{0};
  bool stop_ = false;
  // Fixed per pool (ranges beyond n are empty): a worker reads it before
  // claiming, so it must not change between jobs.
  const int chunks_;
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
