// The die-level pipeline of one channel computed without kernel events: the
// aggregated streaming mode's flash side (ssd.stream_model = AGGREGATED).
//
// It follows the same rules as the page-accurate path (nand::Die, nand::Channel,
// nand::StreamReader in PIPELINED mode, ssd::HostReader, nand::PageConsumer with
// eager retirement):
//   - every die senses its next pages in list order, up to planes_per_die pages
//     of distinct planes per multi-plane read, as soon as it can read (its data
//     register is free: with cache read when the previous group moved to the
//     output register, without it when the previous group's last page is out);
//   - a sensed group moves to the output register when that is free, and each of
//     its pages then requests a data-out; the channel serves data-outs first
//     come, first served, each for its page's bus time (FlashConfig::
//     data_out_ps(): tOut and the read's command, status and column cycles);
//   - with `buffers` > 0 a data-out starts only into a free scratchpad buffer
//     (reserved at its start, freed when the consumer has finished the page it
//     holds); the consumer processes pages in arrival order:
//     done = max(arrival, previous done) + page_time(page, arrival).
// Events at the same instant are taken die by die (index order), then the
// channel, as nand::Channel grants same-instant requests in die order
// (tests/models/nand/pipeline_schedule_test.cc compares every page with the
// page-accurate reader).
//
// Valid only while nothing else uses the channel's dies (no other reader, no
// program to be issued): the caller checks that (FlashArray::quiet_but_programs()).
// Cost: a few arithmetic operations per page, no allocation per page; a
// channel whose pages, page times and start equal the previous channel's (its
// pages' places in the list shifted by one constant) takes that schedule with
// the places shifted, after one comparison per page.
// Steady state: where the schedule's whole state (every die's, the channel's,
// the consumer's and the buffers', times taken from now) recurs some pages
// later, shifted by a time D and by whole pages of every die's queue, and the
// pages ahead repeat those of that period (planes, page times, places shifted
// by one constant), the following periods are the last one shifted by D: their
// pages are written directly, without their events (set_period_advance()).
#pragma once

#include <cstdint>
#include <vector>

#include "models/nand/flash_config.h"
#include "models/nand/page_address.h"

namespace ispsim::nand {

class PipelineSchedule {
 public:
  struct Page {
    uint32_t index = 0;       // place in the page list
    uint64_t arrival_ps = 0;  // end of its data-out (the page is at the controller)
    uint64_t done_ps = 0;     // the consumer finished it (= arrival without a consumer)
  };
  explicit PipelineSchedule(const FlashConfig& config);

  // Takes a stream's page list and sorts its pages by channel and die, once
  // for every channel's run().
  void assign(const std::vector<PageAddress>& pages);
  // Schedules the assigned pages that are on `channel`, the stream starting
  // at `start_ps`. `buffers` = 0: no consumer (data-outs never wait, done =
  // arrival); otherwise the consumer's buffers and its time for each page,
  // `page_ps` by place in the list (null: 0; unchanged until the last run()
  // of the assignment, which compares channels by it). A consumer busy until
  // `consumer_from_ps` (held by an inter-layer prefetch, PageConsumer::
  // release(), or computing other tiles first) starts no page before then.
  // The result, in arrival order, replaces pages_in_arrival_order().
  // `die_ready_ps` (by die of the channel, optional): a die senses no earlier
  // (a program it had under way is being suspended, Die::suspend_for_stream()).
  // No data-out starts before `channel_free_ps` (the data-ins of a program
  // batch queued ahead, Channel::data_ins_end_ps()).
  void run(unsigned channel, uint64_t start_ps, unsigned buffers, const uint64_t* page_ps,
           uint64_t consumer_from_ps = 0, const uint64_t* die_ready_ps = nullptr, uint64_t channel_free_ps = 0);
  // Of the runs since construction: those that took the previous channel's schedule.
  uint64_t repeated_runs() const { return repeated_runs_; }
  // Off: every page by its events (the steady-state advance's reference).
  void set_period_advance(bool on) { period_advance_ = on; }
  // Of the runs since construction: pages written by the steady-state advance.
  uint64_t advanced_pages() const { return advanced_pages_; }

  const std::vector<Page>& pages_in_arrival_order() const { return out_; }
  // Multi-plane senses of the last run, by die of the channel.
  const std::vector<uint64_t>& senses_by_die() const { return senses_; }
  const std::vector<uint64_t>& pages_by_die() const { return pages_by_die_; }
  // When each die's last page of the run was out (0: it had none).
  const std::vector<uint64_t>& last_out_by_die() const { return last_out_; }

 private:
  struct Queued {  // a page of a die's queue: its place in the list, its plane
    uint32_t index;
    uint32_t plane;
  };
  size_t begin_run(unsigned channel);
  struct Die {
    const std::vector<Queued>* queue = nullptr;  // its pages, list order
    size_t next = 0;              // next page of the queue to sense
    bool data_valid = false;      // a sensed (or sensing) group in the data register
    size_t data_first = 0, data_count = 0;
    bool output_valid = false;
    size_t out_first = 0, out_count = 0, out_next = 0;
  };
  // What a run's schedule depends on, besides its pages.
  struct Start {
    uint64_t start_ps, consumer_from_ps, channel_free_ps;
    unsigned buffers;
    const uint64_t* page_ps;
    std::vector<uint64_t> die_ready_ps;
    bool operator==(const Start& o) const {
      return start_ps == o.start_ps && consumer_from_ps == o.consumer_from_ps &&
             channel_free_ps == o.channel_free_ps && buffers == o.buffers && page_ps == o.page_ps &&
             die_ready_ps == o.die_ready_ps;
    }
  };
  // Whether `channel` with `start` is the last run's channel shifted: then
  // pages_in_arrival_order() is made its own.
  bool repeat_last_run(unsigned channel, const Start& start);
  void start_sense(Die& die, unsigned d, uint64_t now);
  void move_to_output(Die& die, unsigned d);

  // The event loop's own state, handed to the steady-state advance.
  // (Taken just after an arrival: the channel is free.)
  struct Cursor {
    size_t arrived;
    uint64_t now;
    uint64_t consumer_busy;
  };
  // The schedule's state after an arrival: `state` (relative to the die
  // queues' places and to `now`) decides every later event but for the pages
  // ahead; the rest places it.
  struct Snapshot {
    size_t arrived = 0;
    uint64_t now = 0;
    std::vector<size_t> next, first_needed;  // by die: next page to sense, first page not yet out
    std::vector<uint64_t> senses, last_out;
    std::vector<uint64_t> state;
  };
  // Every snapshot_interval() arrivals: the state is kept, and when it equals
  // an earlier one's the whole periods ahead are advanced over. True: `cursor` moved.
  bool advance_period(Cursor& cursor);
  size_t snapshot_interval() const { return size_t(config_.dies_per_channel) * config_.planes_per_die; }
  void take_snapshot(const Cursor& cursor, Snapshot& snapshot) const;
  // How many periods like the one from `was` to `now` follow `now` with the
  // same pages (their places shifted by `*list_shift`).
  size_t repeating_periods(const Snapshot& was, const Snapshot& now, int64_t* list_shift);
  bool same_page_shifted(const std::vector<Queued>& queue, size_t at, size_t period, int64_t list_shift) const;
  void repeat_periods(const Snapshot& was, const Snapshot& now, size_t periods, int64_t list_shift, Cursor& cursor);

  const FlashConfig config_;
  bool assigned_ = false;
  static constexpr unsigned kNoRun = ~0u;
  unsigned last_channel_ = kNoRun;  // of this assignment
  Start last_start_{}, next_start_{};
  uint64_t repeated_runs_ = 0;
  bool period_advance_ = true;
  uint64_t advanced_pages_ = 0;
  static constexpr size_t kSnapshots = 8;  // periods of up to 8 snapshot intervals are found
  std::vector<Snapshot> snapshots_ = std::vector<Snapshot>(kSnapshots);  // a ring
  size_t snapshots_taken_ = 0;  // since the run began or last advanced
  std::vector<size_t> checked_to_;  // by die, of repeating_periods()
  std::vector<std::vector<Queued>> queues_;  // by channel, then die
  std::vector<Die> dies_;
  // When each die's sense under way ends (kNever: none), apart from the dies
  // for a branch-free search of the next one.
  std::vector<uint64_t> sense_end_;
  std::vector<uint32_t> fifo_;  // die of each requested data-out, FCFS
  size_t fifo_head_ = 0;
  std::vector<Page> out_;
  std::vector<uint64_t> senses_;
  std::vector<uint64_t> pages_by_die_;
  std::vector<uint64_t> last_out_;
};

}  // namespace ispsim::nand
