#include "models/ssd/flash_job_queue.h"

#include <memory>
#include <stdexcept>

namespace ispsim::ssd {

FlashJobQueue::FlashJobQueue(sc_core::sc_module_name name, bool programs_beside_reads)
    : sc_core::sc_module(name), two_lanes_(programs_beside_reads), stats_(this->name()) {
  SC_HAS_PROCESS(FlashJobQueue);
  SC_METHOD(start_next);
  sensitive << kick_;
  dont_initialize();
  stats_.formula("busy_time", "ns", "time some job held the flash", [this] { return busy_ps_ * 1e-3; });
  stats_.formula("utilization", "ratio", "busy time / simulated time", [this] {
    const double now = double(sc_core::sc_time_stamp().value());
    return now > 0 ? double(busy_ps_) / now : 0.0;
  });
}

bool FlashJobQueue::idle() const {
  return running_ == 0 && lanes_[0].jobs.empty() && lanes_[1].jobs.empty();
}

void FlashJobQueue::push(std::string kind, Job job) {
  const unsigned lane = lane_of(kind);
  lanes_[lane].jobs.push_back({std::move(kind), std::move(job)});
  if (!lanes_[lane].running) kick_.notify(sc_core::SC_ZERO_TIME);
}

void FlashJobQueue::start_next() {
  for (unsigned lane = 0; lane < 2; ++lane) {
    Lane& l = lanes_[lane];
    if (l.running || l.jobs.empty()) continue;
    Entry entry = std::move(l.jobs.front());
    l.jobs.pop_front();
    l.running = true;
    if (running_++ == 0) running_since_ps_ = sc_core::sc_time_stamp().value();
    ++started_;
    if (history_.size() < kHistoryKept) history_.push_back(entry.kind);
    auto released_once = std::make_shared<bool>(false);
    entry.job([this, released_once, lane] {
      if (*released_once) throw std::logic_error(std::string(name()) + ": a job released the flash twice");
      *released_once = true;
      released(lane);
    });
  }
}

void FlashJobQueue::released(unsigned lane) {
  lanes_[lane].running = false;
  if (--running_ == 0) busy_ps_ += sc_core::sc_time_stamp().value() - running_since_ps_;
  if (!lanes_[lane].jobs.empty()) kick_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace ispsim::ssd
