// The controller's queue of flash work: reads for the host, in-flash GEMVs,
// appends and attention passes, first in first out.
//
// One lane (programs_beside_reads = false): one job at a time; a job starts
// when the previous one has released the flash, so a background append batch
// delays every read queued behind it.
// Two lanes (programs_beside_reads = true, the flash suspends programs for
// reads: NandParams.program_suspend): "program" jobs run in their own lane,
// one at a time, beside the foreground lane (everything else, one at a time);
// the dies arbitrate between them (nand::Die: reads first, programs suspended).
//
// Jobs start one delta cycle after they are queued or after the previous job of
// their lane finished (no simulated time), from an SC_METHOD, so a job never
// starts inside another job's callback.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/stats.h"

namespace ispsim::ssd {

class FlashJobQueue : public sc_core::sc_module {
 public:
  using Done = std::function<void()>;
  // A job gets a `release` callback and must call it exactly once, when it no
  // longer needs the flash.
  using Job = std::function<void(Done release)>;

  explicit FlashJobQueue(sc_core::sc_module_name name, bool programs_beside_reads = false);

  void push(std::string kind, Job job);

  bool idle() const;
  // Jobs are queued, not yet started, in the lane a job of `kind` would join.
  bool waiting(const std::string& kind) const { return !lanes_[lane_of(kind)].jobs.empty(); }
  bool programs_beside_reads() const { return two_lanes_; }
  uint64_t jobs_started() const { return started_.value(); }
  // Simulated time some job held the flash (overlapping jobs of the two lanes count once).
  sc_core::sc_time busy_time() const { return sc_core::sc_time::from_value(busy_ps_); }
  // Kinds of the first kHistoryKept jobs in the order they started (for tests
  // and debugging; bounded, so memory does not grow with the simulated work).
  static constexpr size_t kHistoryKept = 64;
  const std::vector<std::string>& history() const { return history_; }

 private:
  unsigned lane_of(const std::string& kind) const { return two_lanes_ && kind == "program" ? 1 : 0; }
  void start_next();
  void released(unsigned lane);

  struct Entry {
    std::string kind;
    Job job;
  };
  struct Lane {
    std::deque<Entry> jobs;
    bool running = false;
  };
  const bool two_lanes_;
  Lane lanes_[2];  // 0: foreground (or everything), 1: programs
  unsigned running_ = 0;
  uint64_t running_since_ps_ = 0;
  sc_core::sc_event kick_;
  stats::Group stats_;  // before the statistics that register in it
  stats::Counter& started_ =
      stats_.counter("jobs", "count", "flash jobs started (reads, appends, attention passes, in-flash GEMVs)");
  uint64_t busy_ps_ = 0;
  std::vector<std::string> history_;
};

}  // namespace ispsim::ssd
