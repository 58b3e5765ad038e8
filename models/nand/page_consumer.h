// The receiving end of one channel: a scratchpad with `buffers` page buffers and
// an accelerator that processes one page at a time in a fixed time per page
// (MemLLM's per-channel scratchpad + Elastic-SIMD, reduced to its timing).
//
// A buffer is reserved when a data-out into it starts and freed when the
// accelerator has finished the page, so with two buffers one page can arrive
// while the previous one is processed (double buffering). Pages are processed
// in arrival order: a page arriving at time a finishes at
// done = max(a, previous done) + time_per_page, fixed the moment it arrives.
//
// Held (hold() ... release()): pages still arrive into free buffers, but the
// accelerator does not start on them until release() (its operands are not
// there yet: an inter-layer prefetch reads the next op's pages before its
// command arrives). At release() the held pages are timed in arrival order from
// then on: done = max(release time, previous done) + time of the page (asked at
// release). With every buffer full of held pages the channel waits.
//
// Finished pages are reported lazily, to spend no kernel event per page: a page
// is retired (buffer freed, callback run with its exact `done` time) when the
// channel next asks for a free buffer or another page arrives; an event is
// scheduled only when the channel is held waiting for a buffer, or after flush()
// (the issuer's last page has arrived). Callbacks therefore run at or after
// `done`, in arrival order per channel; all simulated times are exact.
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <vector>

#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/nand/page_address.h"

namespace ispsim::nand {

class Channel;

class PageConsumer : public sc_core::sc_module {
 public:
  // Called when a page is finished (its buffer is free again); `done_at` is the
  // simulated time the accelerator finished it.
  using Consumed =
      std::function<void(const PageAddress& page, uint32_t tag, const sc_core::sc_time& done_at)>;

  PageConsumer(sc_core::sc_module_name name, Channel& channel, unsigned buffers,
               const sc_core::sc_time& time_per_page, uint32_t page_bytes, Consumed consumed);

  // Time the accelerator needs per page, for the pages that arrive from now on
  // (one consumer can serve ops of different sizes).
  void set_time_per_page(const sc_core::sc_time& time_per_page);
  // Per-page time instead, asked when the page arrives (at its arrival time);
  // an empty function returns to the fixed time per page.
  using PageTime = std::function<sc_core::sc_time(const PageAddress& page, uint32_t tag)>;
  void set_page_time(PageTime page_time) { page_time_ = std::move(page_time); }
  // Eager: every page is retired at its done time by its own event (one extra
  // event per page), so the callback runs exactly at done_at. Default: lazy.
  void set_eager(bool eager) { eager_ = eager; }

  // Retires finished pages first; when none is free the channel is kicked later.
  bool has_free_buffer();
  void reserve_buffer();
  // Returns the time the accelerator will have finished this page.
  sc_core::sc_time page_arrived(const PageAddress& page, uint32_t tag);
  // Retire every page that has arrived at its done time (schedules the events).
  void flush();
  // See above. release() while not held does nothing.
  void hold() { held_ = true; }
  void release();
  bool held() const { return held_; }

  uint64_t pages_consumed() const { return pages_.value(); }
  unsigned max_occupancy() const { return max_reserved_; }
  void trace(vcd::Writer& writer);

 private:
  struct Slot {
    PageAddress page;
    uint32_t tag = 0;
    uint64_t done_ps = 0;
  };
  void retire_due();
  void finish_head();
  void schedule(uint64_t at_ps);
  void on_consume_done();

  Channel& channel_;
  const unsigned buffers_;
  sc_core::sc_time time_per_page_;
  PageTime page_time_;
  bool eager_ = false;
  const Consumed consumed_;
  std::vector<Slot> ring_;  // arrived, unfinished-or-unretired pages in order; capacity = buffers
  size_t head_ = 0;
  size_t waiting_ = 0;
  unsigned reserved_ = 0;
  unsigned max_reserved_ = 0;
  uint64_t busy_until_ps_ = 0;   // when the accelerator finishes the last arrived page
  uint64_t event_at_ps_ = 0;     // time of the pending consume_done_ notification
  bool event_pending_ = false;
  bool channel_waiting_ = false; // the channel was refused a buffer
  bool flushing_ = false;
  bool held_ = false;
  size_t held_count_ = 0;        // the last held_count_ slots of the ring wait for release()
  sc_core::sc_event consume_done_;

  uint64_t busy_ps_ = 0;
  stats::Group stats_;
  stats::Counter& pages_ = stats_.counter("pages_consumed", "count", "pages processed by the consumer");
  vcd::Signal occupancy_signal_;  // buffers in use (a freed buffer shows when its page retires)
};

}  // namespace ispsim::nand
