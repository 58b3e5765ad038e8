// One flash channel: the bus shared by its dies. One transaction at a time; the
// data of a page takes tOut = page_bytes / (channel_rate_mtps * 1e6 *
// channel_width_bits / 8), and the ONFI cycles around it their own bus time
// (FlashConfig, all parameters of schema/nand.proto):
//   page data-out  = t_read_command + tOut + tRHW
//                    + the sense's first page: t_status_poll + one cycle (00h)
//                      any other page of a multi-plane sense: t_column_select
//   page data-in   = t_program_command + tIn + t_status_poll
//   erase command  = t_erase_command + t_status_poll
// Each operation's cycles are one transaction with its data: a read's command
// (sent before tR on a real bus) and a program's or erase's status poll (after
// tPROG / tBERS) are taken with the data-out or data-in. The bus time of every
// operation and the latency of one on an idle bus are exact; under contention
// a read's command slot is taken after its sense rather than before. (One
// transaction per page keeps nand::PipelineSchedule, the event-free schedule,
// equal to this page-accurate bus.) With every cycle time zero a transaction
// is its data alone, and an erase takes no transaction at all.
//
// Arbitration is first come, first served: each page ready for data-out and
// each program waiting for data-in queues one request, and the bus serves the
// oldest request next. Requests raised at the same simulated time go in die
// order (a fixed-priority arbiter): a request raised at the current instant is
// granted a delta cycle later, once the requests raised in the same delta are
// in, so the order in which the kernel ran the dies does not matter for them.
// (A data-in raised a delta later, by a program job the same instant started,
// can still come after a data-out of a higher die: page-accurate runs with
// program batches keep that much of the kernel's order.) A data-out waits at
// the head of the queue until its issuer has room for the page
// (FlashClient::may_start_data_out); the requests behind it wait too (no
// overtaking), which is what a controller with one in-order command queue per
// channel does.
#pragma once

#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/nand/die.h"
#include "models/nand/flash_config.h"

namespace ispsim::nand {

class Channel : public sc_core::sc_module {
 public:
  // Creates the channel's dies as children "die0", "die1", ...
  Channel(sc_core::sc_module_name name, const FlashConfig& config, unsigned index);

  unsigned index() const { return index_; }
  Die& die(unsigned d) { return *dies_[d]; }
  const Die& die(unsigned d) const { return *dies_[d]; }
  unsigned die_count() const { return unsigned(dies_.size()); }

  // One page of `die`'s output stage is ready for data-out.
  void request_data_out(Die& die) { enqueue(die, false); }
  // `die` waits for the data-in of the page it will program (or the command of its erase).
  void request_data_in(Die& die) { enqueue(die, true); }
  // Room may have appeared at an issuer: retry the head of the queue (see kick()
  // in channel.cc for when the grant waits a delta cycle).
  void kick();

  bool busy() const { return busy_; }
  bool quiet() const { return !busy_ && queued_ == 0; }
  // Nothing under way or queued but data-ins (the pages of a program batch).
  bool only_data_ins() const;
  // With only_data_ins(): when the channel will have served every data-in
  // queued now (now_ps when quiet), and when `die`'s own one ends (FCFS).
  uint64_t data_ins_end_ps(uint64_t now_ps) const;
  uint64_t data_in_end_ps(const Die& die) const;
  // Data-outs scheduled without events (the aggregated streaming mode).
  void account_aggregated_transfers(uint64_t pages, uint64_t senses) {
    transfers_out_ += pages;
    const uint64_t busy = config_.data_outs_ps(pages, senses);
    busy_ps_ += busy;
    command_ps_ += busy - pages * config_.t_page_transfer.value();
  }
  // An aggregated stream's data-outs were scheduled on the assumption that no
  // data-in joins the channel: no die of it starts a program (Die::can_program)
  // from bar_programs() until the time given to release_programs_at(); the dies
  // are then offered to the program issuers. A new bar replaces a pending release.
  void bar_programs();
  void release_programs_at(uint64_t at_ps);
  bool programs_barred() const { return programs_barred_; }
  void trace(vcd::Writer& writer);
  // The names of owner values with `dies` dies: 0 "free", 1 + d "die<d>".
  static vcd::Encoding owner_encoding(unsigned dies);

 private:
  struct Request {
    Die* die = nullptr;
    bool data_in = false;
    uint64_t raised_ps = 0;
  };
  void enqueue(Die& die, bool data_in);
  void try_grant();
  void on_transfer_done();
  void on_programs_released();

  const FlashConfig& config_;
  const unsigned index_;
  std::vector<std::unique_ptr<Die>> dies_;

  // Ring buffer of requests. A die has at most planes_per_die data-out requests
  // plus one data-in request outstanding, so its capacity never runs out.
  std::vector<Request> ring_;
  size_t head_ = 0;
  size_t queued_ = 0;
  bool busy_ = false;
  // Bus time of a request's transaction (channel.h, top).
  uint64_t duration_ps(const Request& request) const;
  Request current_;
  uint64_t transfer_end_ps_ = 0;  // of the current transfer
  sc_core::sc_event transfer_done_;
  sc_core::sc_event grant_;
  bool programs_barred_ = false;
  sc_core::sc_event programs_released_;

  uint64_t busy_ps_ = 0;
  uint64_t command_ps_ = 0;  // of busy_ps_: command, address and status cycles, turnarounds
  stats::Group stats_;
  stats::Counter& transfers_out_ = stats_.counter("transfers_out", "count", "page data-outs (die to controller)");
  stats::Counter& transfers_in_ = stats_.counter("transfers_in", "count", "page data-ins (controller to die)");
  vcd::Signal busy_signal_;
  vcd::Signal owner_signal_;  // 0 = free, else 1 + index of the transferring die
};

}  // namespace ispsim::nand
