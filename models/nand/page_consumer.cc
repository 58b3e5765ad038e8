#include "models/nand/page_consumer.h"

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

  const double bytes = page_bytes;
  stats_.formula("pages_consumed", "count", "pages processed by the consumer",
                 [this] { return double(pages_); });
  stats_.formula("bytes_consumed", "bytes", "bytes processed by the consumer",
                 [this, bytes] { return double(pages_) * bytes; });
  stats_.formula("busy_time", "ns", "time spent processing pages", [this] { return busy_ps_ * 1e-3; });
  stats_.formula("buffers", "count", "page buffers in the scratchpad", [this] { return double(buffers_); });
  stats_.formula("max_occupancy", "count", "most buffers in use at once",
                 [this] { return double(max_reserved_); });
}

void PageConsumer::reserve_buffer() {
  if (reserved_ == buffers_) throw std::logic_error(std::string(name()) + ": no free buffer");
  ++reserved_;
  if (reserved_ > max_reserved_) max_reserved_ = reserved_;
  occupancy_signal_.set(reserved_);
}

void PageConsumer::page_arrived(const PageAddress& page, uint32_t tag) {
  ring_[(head_ + waiting_) % ring_.size()] = Slot{page, tag};
  ++waiting_;
  if (!busy_) start_next();
}

void PageConsumer::start_next() {
  if (time_per_page_ == sc_core::SC_ZERO_TIME) {
    while (waiting_ > 0) finish_head();
    return;
  }
  if (waiting_ == 0) return;
  busy_ = true;
  busy_signal_.set(1);
  busy_ps_ += time_per_page_.value();
  consume_done_.notify(time_per_page_);
}

void PageConsumer::on_consume_done() {
  busy_ = false;
  busy_signal_.set(0);
  finish_head();
  start_next();
}

void PageConsumer::finish_head() {
  const Slot slot = ring_[head_];
  head_ = (head_ + 1) % ring_.size();
  --waiting_;
  --reserved_;
  occupancy_signal_.set(reserved_);
  ++pages_;
  consumed_(slot.page, slot.tag);
  channel_.kick();  // a buffer is free: a held data-out may start
}

void PageConsumer::trace(vcd::Writer& writer) {
  writer.add(std::string(name()) + ".occupancy", 7, occupancy_signal_);
  writer.add(std::string(name()) + ".busy", 1, busy_signal_);
}

}  // namespace ispsim::nand
