#include "models/ssd/flash_job_queue.h"

#include <memory>
#include <stdexcept>

namespace ispsim::ssd {

FlashJobQueue::FlashJobQueue(sc_core::sc_module_name name)
    : sc_core::sc_module(name), stats_(this->name()) {
  SC_HAS_PROCESS(FlashJobQueue);
  SC_METHOD(start_next);
  sensitive << kick_;
  dont_initialize();
  stats_.formula_integer("jobs", "count", "flash jobs started (reads, appends, attention passes)",
                         [this] { return started_; });
  stats_.formula("busy_time", "ns", "time some job held the flash", [this] { return busy_ps_ * 1e-3; });
  stats_.formula("utilization", "ratio", "busy time / simulated time", [this] {
    const double now = double(sc_core::sc_time_stamp().value());
    return now > 0 ? double(busy_ps_) / now : 0.0;
  });
}

void FlashJobQueue::push(std::string kind, Job job) {
  jobs_.push_back({std::move(kind), std::move(job)});
  if (!running_) kick_.notify(sc_core::SC_ZERO_TIME);
}

void FlashJobQueue::start_next() {
  if (running_ || jobs_.empty()) return;
  Entry entry = std::move(jobs_.front());
  jobs_.pop_front();
  running_ = true;
  running_since_ps_ = sc_core::sc_time_stamp().value();
  ++started_;
  if (history_.size() < kHistoryKept) history_.push_back(entry.kind);
  auto released_once = std::make_shared<bool>(false);
  entry.job([this, released_once] {
    if (*released_once) throw std::logic_error(std::string(name()) + ": a job released the flash twice");
    *released_once = true;
    released();
  });
}

void FlashJobQueue::released() {
  busy_ps_ += sc_core::sc_time_stamp().value() - running_since_ps_;
  running_ = false;
  if (!jobs_.empty()) kick_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace ispsim::ssd
