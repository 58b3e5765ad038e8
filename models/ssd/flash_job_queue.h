// The controller's single queue of flash work: reads for the host, appends and
// attention passes run one job at a time, first in first out. A job starts when
// the previous one has released the flash.
//
// This is a simplification of a real controller, which interleaves program and
// read commands per die: here a background append batch delays every read
// queued behind it instead of sharing the dies with it. Jobs start one delta
// cycle after they are queued or after the previous job finished (no simulated
// time), from an SC_METHOD, so a job never starts inside another job's callback.
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

  explicit FlashJobQueue(sc_core::sc_module_name name);

  void push(std::string kind, Job job);

  bool idle() const { return !running_ && jobs_.empty(); }
  uint64_t jobs_started() const { return started_; }
  // Simulated time a job held the flash, summed over jobs.
  sc_core::sc_time busy_time() const { return sc_core::sc_time::from_value(busy_ps_); }
  // Kinds of the first kHistoryKept jobs in the order they started (for tests
  // and debugging; bounded, so memory does not grow with the simulated work).
  static constexpr size_t kHistoryKept = 64;
  const std::vector<std::string>& history() const { return history_; }

 private:
  void start_next();
  void released();

  struct Entry {
    std::string kind;
    Job job;
  };
  std::deque<Entry> jobs_;
  bool running_ = false;
  uint64_t running_since_ps_ = 0;
  sc_core::sc_event kick_;
  uint64_t started_ = 0;
  uint64_t busy_ps_ = 0;
  std::vector<std::string> history_;
  stats::Group stats_;
};

}  // namespace ispsim::ssd
