// The receiving end of one channel: a scratchpad with `buffers` page buffers and
// an accelerator that processes one page at a time in a fixed time per page
// (MemLLM's per-channel scratchpad + Elastic-SIMD, reduced to its timing).
//
// A buffer is reserved when a data-out into it starts and freed when the
// accelerator has finished the page, so with two buffers one page can arrive
// while the previous one is processed (double buffering). Pages are processed
// in arrival order. A processing time of zero consumes a page the moment it
// arrives, without an event.
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
  // Called when the accelerator has finished a page (its buffer is free again).
  using Consumed = std::function<void(const PageAddress& page, uint32_t tag)>;

  PageConsumer(sc_core::sc_module_name name, Channel& channel, unsigned buffers,
               const sc_core::sc_time& time_per_page, uint32_t page_bytes, Consumed consumed);

  bool has_free_buffer() const { return reserved_ < buffers_; }
  void reserve_buffer();
  void page_arrived(const PageAddress& page, uint32_t tag);

  uint64_t pages_consumed() const { return pages_; }
  unsigned max_occupancy() const { return max_reserved_; }
  void trace(vcd::Writer& writer);

 private:
  struct Slot {
    PageAddress page;
    uint32_t tag = 0;
  };
  void start_next();
  void finish_head();
  void on_consume_done();

  Channel& channel_;
  const unsigned buffers_;
  const sc_core::sc_time time_per_page_;
  const Consumed consumed_;
  std::vector<Slot> ring_;  // arrived pages in order; capacity = buffers
  size_t head_ = 0;
  size_t waiting_ = 0;
  unsigned reserved_ = 0;
  unsigned max_reserved_ = 0;
  bool busy_ = false;
  sc_core::sc_event consume_done_;

  uint64_t pages_ = 0;
  uint64_t busy_ps_ = 0;
  stats::Group stats_;
  vcd::Signal occupancy_signal_;  // buffers in use
  vcd::Signal busy_signal_;       // accelerator processing a page
};

}  // namespace ispsim::nand
