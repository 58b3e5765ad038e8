// Out-of-place appends (MemLLM Sec. IV-B "write latency hiding"): new KV pages
// are programmed to the next free pages of an append region instead of
// overwriting the precomputed KV, so there is no read-modify-write. Each page is
// a data-in over its channel (tIn = page_bytes / channel rate) followed by tPROG
// on its die; a die programs one page at a time, and the channel is free for
// other dies during tPROG. Pages of one die are programmed in list order.
//
// The caller chooses the addresses (the facade takes them from Layout, starting
// at the append region's write pointer). One batch at a time.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "models/core/stats.h"
#include "models/nand/flash_array.h"

namespace ispsim::nand {

class Appender : public sc_core::sc_module, public FlashClient {
 public:
  Appender(sc_core::sc_module_name name, FlashArray& flash);

  // Starts programming `pages` at the current simulated time, for garbage
  // collection or not. BadInput for an address outside the flash.
  void start(std::vector<PageAddress> pages, const std::string& where = "append", bool garbage_collection = false);
  bool done() const { return programmed_ == pages_.size(); }
  // Every page of the batch has been handed to its die (only tPROGs are left).
  bool all_issued() const;
  const sc_core::sc_event& done_event() const { return done_event_; }
  sc_core::sc_time started_at() const { return started_at_; }
  sc_core::sc_time finished_at() const { return finished_at_; }

  // FlashClient
  void on_die_idle(Die& die) override;
  void on_page_programmed(const PageAddress& page, uint32_t tag) override;
  bool garbage_collection() const override { return garbage_collection_; }

 private:
  void issue(Die& die);

  FlashArray& flash_;
  std::vector<PageAddress> pages_;
  std::vector<uint32_t> order_, begin_, next_;  // page indices bucketed by die
  uint64_t programmed_ = 0;
  bool active_ = false;
  bool garbage_collection_ = false;  // of the batch under way
  sc_core::sc_time started_at_, finished_at_;
  sc_core::sc_event done_event_;

  uint64_t batch_ps_ = 0;
  stats::Group stats_;
  stats::Counter& total_programmed_ = stats_.counter("pages_programmed", "count", "pages appended (programmed)");
};

}  // namespace ispsim::nand
