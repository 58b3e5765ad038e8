#include "models/nand/page_consumer.h"

#include <algorithm>
#include <stdexcept>

#include "models/nand/channel.h"

namespace ispsim::nand {

PageConsumer::PageConsumer(sc_core::sc_module_name name, Channel& channel, unsigned buffers,
                           const sc_core::sc_time& time_per_page, uint32_t page_bytes,
                           Consumed consumed)
    : sc_core::sc_module(name),
      channel_(channel),
      buffers_(buffers),
      time_per_page_(time_per_page),
      consumed_(std::move(consumed)),
      ring_(buffers),
      stats_(this->name()) {
  SC_HAS_PROCESS(PageConsumer);
  SC_METHOD(on_consume_done);
  sensitive << consume_done_;
  dont_initialize();

  const uint64_t bytes = page_bytes;
  stats_.formula_integer("bytes_consumed", "bytes", "bytes processed by the consumer",
                         [this, bytes] { return pages_.value() * bytes; });
  stats_.formula("busy_time", "ns", "time spent processing pages (counted when a page arrives)",
                 [this] { return busy_ps_ * 1e-3; });
  stats_.formula_integer("buffers", "count", "page buffers in the scratchpad", [this] { return buffers_; });
  stats_.formula_integer("max_occupancy", "count", "most buffers in use at once", [this] { return max_reserved_; });
}

void PageConsumer::set_time_per_page(const sc_core::sc_time& time_per_page) {
  time_per_page_ = time_per_page;
}

namespace {
constexpr uint64_t kNotTimed = UINT64_MAX;  // a held page: its done time is set at release()
}  // namespace

bool PageConsumer::has_free_buffer() {
  retire_due();
  if (reserved_ < buffers_) return true;
  // Full: wake the channel when the oldest page is finished (release() does it for held pages).
  channel_waiting_ = true;
  if (waiting_ > 0 && ring_[head_].done_ps != kNotTimed) schedule(ring_[head_].done_ps);
  return false;
}

void PageConsumer::reserve_buffer() {
  if (reserved_ == buffers_) throw std::logic_error(std::string(name()) + ": no free buffer");
  ++reserved_;
  if (reserved_ > max_reserved_) max_reserved_ = reserved_;
  occupancy_signal_.set(reserved_);
}

sc_core::sc_time PageConsumer::page_arrived(const PageAddress& page, uint32_t tag) {
  retire_due();
  if (held_) {
    size_t tail = head_ + waiting_;
    if (tail >= ring_.size()) tail -= ring_.size();
    ring_[tail] = Slot{page, tag, kNotTimed};
    ++waiting_;
    ++held_count_;
    return sc_core::SC_ZERO_TIME;  // not known yet (only SEQUENTIAL streams use it, and they are never held)
  }
  const uint64_t now = sc_core::sc_time_stamp().value();
  const uint64_t time = page_time_ ? page_time_(page, tag).value() : time_per_page_.value();
  const uint64_t done = std::max(now, busy_until_ps_) + time;
  busy_until_ps_ = done;
  busy_ps_ += time;
  size_t tail = head_ + waiting_;
  if (tail >= ring_.size()) tail -= ring_.size();
  ring_[tail] = Slot{page, tag, done};
  ++waiting_;
  if (done == now) {
    retire_due();
  } else if (flushing_ || eager_) {
    schedule(ring_[head_].done_ps);
  }
  return sc_core::sc_time::from_value(done);
}

void PageConsumer::flush() {
  flushing_ = true;
  if (waiting_ > 0 && ring_[head_].done_ps != kNotTimed) schedule(ring_[head_].done_ps);
}

void PageConsumer::release() {
  if (!held_) return;
  held_ = false;
  const uint64_t now = sc_core::sc_time_stamp().value();
  for (size_t i = waiting_ - held_count_; i < waiting_; ++i) {
    Slot& slot = ring_[(head_ + i) % ring_.size()];
    const uint64_t time = page_time_ ? page_time_(slot.page, slot.tag).value() : time_per_page_.value();
    slot.done_ps = std::max(now, busy_until_ps_) + time;
    busy_until_ps_ = slot.done_ps;
    busy_ps_ += time;
  }
  held_count_ = 0;
  // Retired from the event (never inside the caller), which also wakes a waiting channel.
  if (waiting_ > 0) schedule(ring_[head_].done_ps);
}

void PageConsumer::schedule(uint64_t at_ps) {
  if (at_ps == kNotTimed) return;  // a held page: release() schedules it
  const uint64_t now = sc_core::sc_time_stamp().value();
  if (event_pending_ && event_at_ps_ <= at_ps) return;  // an earlier wake-up comes anyway
  event_pending_ = true;
  event_at_ps_ = at_ps;
  consume_done_.notify(sc_core::sc_time::from_value(at_ps - now));
}

void PageConsumer::on_consume_done() {
  event_pending_ = false;
  retire_due();
  if (waiting_ > 0 && (flushing_ || eager_)) schedule(ring_[head_].done_ps);
  if (channel_waiting_) {
    channel_waiting_ = false;
    channel_.kick();  // a buffer is free: the held data-out may start
  }
}

void PageConsumer::retire_due() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  while (waiting_ > 0 && ring_[head_].done_ps <= now) finish_head();
  if (waiting_ == 0) flushing_ = false;
}

void PageConsumer::finish_head() {
  const Slot slot = ring_[head_];
  if (++head_ == ring_.size()) head_ = 0;
  --waiting_;
  --reserved_;
  occupancy_signal_.set(reserved_);
  ++pages_;
  consumed_(slot.page, slot.tag, sc_core::sc_time::from_value(slot.done_ps));
}

void PageConsumer::trace(vcd::Writer& writer) {
  writer.add(std::string(name()) + ".occupancy", 7, occupancy_signal_,
             {vcd::Role::kScratchpad, static_cast<int>(channel_.index())});
}

}  // namespace ispsim::nand
