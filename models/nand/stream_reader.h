// Reads a list of pages from the flash and hands each one, once, to a
// per-channel PageConsumer (scratchpad buffers + accelerator time).
//
// SEQUENTIAL: each channel has one page in flight at a time, in list order:
//   sense (tR), data-out (tOut), consume; the next page's sense starts when the
//   consumer has finished the previous page. Per channel N pages take exactly
//   N * (tR + tOut + t_consume); channels run in parallel.
// PIPELINED: every die senses its next pages (in list order, up to
//   planes_per_die pages of distinct planes per multi-plane read) as soon as it
//   can read again; data-outs share the channel first come, first served and
//   start only into a free scratchpad buffer; the consumer processes pages in
//   arrival order. This is MemLLM's three-stage die-level pipeline (Sec. V-C):
//   while die i senses, die i-1 transfers and the consumer works on the page of
//   die i-2. In steady state a channel delivers a page every
//   max(tOut, t_consume, (tR + tOut) / dies) (without cache read), so tR is hidden
//   once dies_per_channel >= (tR + tOut) / tOut.
//
// Kernel events per page: SEQUENTIAL 2 (sense end, data-out end: when a page
// arrives, its consumer's finish time is known, so the next sense is issued at
// once with that start delay); PIPELINED 1 + 1/planes (one sense end per
// multi-plane group, one data-out end). Consumers are lazy (page_consumer.h).
//
// One stream at a time: start() while a stream is under way is a programming
// error. Page tags given to the callback are indices into the list.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/nand/flash_array.h"
#include "models/nand/flash_config.h"
#include "models/nand/page_consumer.h"
#include "models/nand/page_queues.h"

namespace ispsim::nand {

class StreamReader : public sc_core::sc_module, public FlashClient {
 public:
  // Called once per page when the consumer has finished it; `index` is its place in
  // the list, `done_at` the simulated time the consumer finished it. The call comes
  // at or after done_at (lazy consumers, see page_consumer.h), in order per channel.
  using Delivery =
      std::function<void(const PageAddress& page, uint32_t index, const sc_core::sc_time& done_at)>;

  // Creates one PageConsumer per channel as children "consumer0", ...
  StreamReader(sc_core::sc_module_name name, FlashArray& flash, const StreamConfig& config);

  void set_delivery(Delivery delivery) { delivery_ = std::move(delivery); }

  // Starts reading `pages` at the current simulated time. Throws BadInput(where, ...)
  // for an address outside the flash. An empty list completes at once.
  void start(std::vector<PageAddress> pages, const std::string& where = "stream");

  bool done() const { return delivered_ == pages_.size(); }
  // Notified (delta) when the last page of a stream has been consumed.
  const sc_core::sc_event& done_event() const { return done_event_; }
  sc_core::sc_time started_at() const { return started_at_; }
  sc_core::sc_time finished_at() const { return finished_at_; }
  uint64_t pages_delivered() const { return delivered_; }

  PageConsumer& consumer(unsigned channel) { return *consumers_[channel]; }
  const StreamConfig& config() const { return config_; }
  void trace(vcd::Writer& writer);

  // FlashClient
  void on_die_idle(Die& die) override;
  bool may_start_data_out(unsigned channel) override;
  void on_data_out_started(unsigned channel) override;
  void on_page_read(const PageAddress& page, uint32_t tag) override;

 private:
  void on_consumed(const PageAddress& page, uint32_t tag, const sc_core::sc_time& done_at);
  void issue_for_die(Die& die);
  void issue_for_channel(unsigned channel);

  FlashArray& flash_;
  const StreamConfig config_;
  std::vector<std::unique_ptr<PageConsumer>> consumers_;
  Delivery delivery_;

  std::vector<PageAddress> pages_;
  PageQueues queues_;  // page indices by queue (die in PIPELINED, channel in SEQUENTIAL)
  std::vector<uint8_t> channel_in_flight_;  // SEQUENTIAL: a page of the channel is under way
  std::vector<uint64_t> channel_ready_ps_;  // SEQUENTIAL: when the channel's consumer is done
  uint64_t arrived_ = 0;  // pages whose data-out has finished
  uint64_t delivered_ = 0;
  bool active_ = false;
  sc_core::sc_time started_at_;
  sc_core::sc_time finished_at_;
  sc_core::sc_event done_event_;

  uint64_t stream_ps_ = 0;
  stats::Group stats_;
  stats::Counter& streams_ = stats_.counter("streams", "count", "page lists read");
  stats::Counter& total_delivered_ = stats_.counter("pages_delivered", "count", "pages consumed, over all streams");
};

}  // namespace ispsim::nand
