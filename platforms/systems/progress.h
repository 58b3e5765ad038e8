// Progress displays for long simulations on a terminal. They draw on stderr
// only when that is a terminal, first after two seconds and then at most twice
// a second, and erase their line when done; otherwise they do nothing, so pipes
// and logs stay quiet. Shares and ETAs count simulated work (op_work()), not
// ops: an op that streams its KV page by page costs the simulator events per
// page, a GPU op a few. The ETA comes from the wall-clock rate of work so far,
// a guide, not a promise: the estimate does not see which device reads the KV
// (a staging hit reads none).
//  - Progress: one run (`ispsim run`): ops completed, share of the work,
//    simulated time, current phase.
//  - CompareProgress: `ispsim compare`'s parent, over the platforms its child
//    processes simulate; each child publishes its work done in a ProgressSlot
//    in memory shared with the parent (SharedProgress).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "traces/trace.pb.h"

namespace ispsim::systems {

// The simulated work of one op, in page events: 1 for the op itself, plus, when
// the SSD streams page by page (`page_bytes` > 0; 0 for the aggregated stream
// model, whose cost does not grow with the bytes), one per flash page of KV the
// op reads (its attention's KV spans, a kv_load) or writes (a kv_append). An
// attention's KV counts `kv_passes` times: the row chunks of an in-storage
// attention whose query rows exceed the coordinator's buffers each stream it.
uint64_t op_work(const trace::Op& op, uint64_t kv_bytes_per_token, uint64_t page_bytes, uint64_t kv_passes = 1);

// The work of one run done so far, written by the run, read by another process.
struct ProgressSlot {
  std::atomic<uint64_t> done_work{0}, total_work{0};
};

// One line on stderr, redrawn in place, when stderr is a terminal.
class TerminalLine {
 public:
  explicit TerminalLine(bool enabled);
  ~TerminalLine();
  TerminalLine(const TerminalLine&) = delete;
  TerminalLine& operator=(const TerminalLine&) = delete;

  bool enabled() const { return enabled_; }
  // True when a redraw is due (and marks it done): the caller then calls draw().
  bool due();
  void draw(const std::string& text);
  double elapsed_s() const;

 private:
  using Clock = std::chrono::steady_clock;
  const bool enabled_;
  const Clock::time_point started_ = Clock::now();
  Clock::time_point next_draw_;
  bool drawn_ = false;
};

class Progress {
 public:
  // What the line shows.
  struct Figures {
    size_t done_ops = 0, total_ops = 0;
    uint64_t done_work = 0, total_work = 0;
    uint64_t simulated_ps = 0;
  };

  // `work[i]`: op i's op_work(). `enabled` false (or stderr not a terminal)
  // draws nothing; `slot`, when given, receives the work done whether or not
  // anything is drawn.
  Progress(std::string label, std::vector<uint64_t> work, bool enabled, ProgressSlot* slot = nullptr);

  void set_phase(std::string phase) { phase_ = std::move(phase); }
  // Op `index` completed at simulated time `simulated_ps`.
  void completed(size_t index, uint64_t simulated_ps);

  // The line drawn for these figures (also used by the tests).
  static std::string line(const std::string& label, const Figures& figures, const std::string& phase,
                          double elapsed_s);

 private:
  const std::string label_;
  const std::vector<uint64_t> work_;
  ProgressSlot* const slot_;
  TerminalLine terminal_;
  Figures figures_;
  std::string phase_;
};

// `slots` ProgressSlots in anonymous shared memory: created before fork(), so
// children write where the parent reads.
class SharedProgress {
 public:
  explicit SharedProgress(size_t slots);
  ~SharedProgress();
  SharedProgress(const SharedProgress&) = delete;
  SharedProgress& operator=(const SharedProgress&) = delete;

  ProgressSlot& operator[](size_t i) { return slots_[i]; }
  size_t size() const { return size_; }

 private:
  ProgressSlot* slots_;
  size_t size_;
};

class CompareProgress {
 public:
  CompareProgress(std::vector<std::string> names, SharedProgress& slots);
  void finished(size_t index) { finished_[index] = 1; }
  void tick();  // redraws when due

  // A run's share of its work: < 0 not started, 0..1 under way, exactly 1 finished.
  // Draws "compare: 2 of 6 platforms done; MemLLM 45.0 %, GPU-FullCompute
  // 12.5 %; ETA 2m10s" (the ETA from the mean share over all platforms).
  static std::string line(const std::vector<std::string>& names, const std::vector<double>& shares,
                          double elapsed_s);

 private:
  const std::vector<std::string> names_;
  SharedProgress& slots_;
  std::vector<uint8_t> finished_;
  TerminalLine terminal_;
};

}  // namespace ispsim::systems
