// A one-line progress display for long simulations on a terminal: the share of
// the program's ops completed, the simulated time, the current phase and an
// ETA from the wall-clock rate so far (ops differ in cost, so the ETA is a
// guide, not a promise). It draws on stderr only when that is a terminal,
// first after two seconds and then at most twice a second, and erases its line
// when the run ends; otherwise it does nothing, so pipes and logs stay quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ispsim::systems {

class Progress {
 public:
  // `enabled` false (or stderr not a terminal) makes every call a no-op.
  Progress(std::string label, size_t total_ops, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void set_phase(std::string phase) { phase_ = std::move(phase); }
  void update(size_t done_ops, uint64_t simulated_ps);

  // The line drawn for these figures (also used by the tests).
  static std::string line(const std::string& label, size_t done_ops, size_t total_ops, uint64_t simulated_ps,
                          const std::string& phase, double elapsed_s);

 private:
  using Clock = std::chrono::steady_clock;
  const std::string label_;
  const size_t total_ops_;
  const bool enabled_;
  const Clock::time_point started_ = Clock::now();
  Clock::time_point next_draw_;
  bool drawn_ = false;
  std::string phase_;
};

}  // namespace ispsim::systems
