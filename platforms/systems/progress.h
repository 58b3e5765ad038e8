// Progress displays for long simulations on a terminal. They draw on stderr
// only when that is a terminal, first after two seconds and then at most twice
// a second, and erase their line when done; otherwise they do nothing, so pipes
// and logs stay quiet. ETAs come from the wall-clock rate so far (ops differ
// in cost, so an ETA is a guide, not a promise).
//  - Progress: one run (`ispsim run`): share of the program's ops completed,
//    simulated time, current phase.
//  - CompareProgress: `ispsim compare`'s parent, over the platforms its child
//    processes simulate; each child publishes its share in a ProgressSlot in
//    memory shared with the parent (SharedProgress).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ispsim::systems {

// The ops of one run completed so far, written by the run, read by another process.
struct ProgressSlot {
  std::atomic<uint64_t> done_ops{0}, total_ops{0};
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
  // `enabled` false (or stderr not a terminal) draws nothing; `slot`, when
  // given, receives the counts whether or not anything is drawn.
  Progress(std::string label, size_t total_ops, bool enabled, ProgressSlot* slot = nullptr);

  void set_phase(std::string phase) { phase_ = std::move(phase); }
  void update(size_t done_ops, uint64_t simulated_ps);

  // The line drawn for these figures (also used by the tests).
  static std::string line(const std::string& label, size_t done_ops, size_t total_ops, uint64_t simulated_ps,
                          const std::string& phase, double elapsed_s);

 private:
  const std::string label_;
  const size_t total_ops_;
  ProgressSlot* const slot_;
  TerminalLine terminal_;
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

  // A run's share: < 0 not started, 0..1 under way, exactly 1 finished.
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
