// One NAND die (LUN): planes, a data register and (with cache read) a cache
// register per plane, the array operations tR and tPROG, and the die's side of
// the channel transfers.
//
// Read: read() starts sensing a group of up to planes_per_die pages in distinct
// planes (a multi-plane read: one tR for the whole group). When sensing ends the
// group moves to the output stage and each page asks the channel for a data-out
// (tOut per page). Without cache read the group occupies the data register
// until its last page is out, so the next sense waits for that. With cache read
// the group moves to the cache register when sensing ends (if the cache
// register is free), so the next group can be sensed while this one transfers;
// the copy data -> cache register (tRCBSY, well under 1 us) is not modelled.
//
// Program: program() reserves the die, asks the channel for a data-in (tIn =
// tOut), then programs for tPROG. Single-plane only; no cache program.
// Multi-plane address rules beyond "distinct planes" (same page number on each
// plane) are not enforced.
//
// Program suspend (FlashConfig::program_suspend): a reader that finds the die
// programming calls request_read(). If more than t_suspend of tPROG is left, the
// program's progress is frozen at that moment (remaining = end - now), the die
// spends t_suspend suspending, then is free for reads (can_read()); its readers
// are told by on_die_idle. Once the die holds no read data and no reader took it
// in on_die_idle, the program resumes and ends t_resume + remaining later. A
// later read request suspends it again. Closed form, one read requested at t1
// during a program whose tPROG started at t0: the read's sense starts at
// t1 + t_suspend; the program ends at (last data-out of the read) + t_resume +
// (t0 + tPROG - t1). With less than t_suspend left the read waits for the end of
// the program instead. Readers are served before programs: clients registered
// as background (add_client(c, true)) hear on_die_idle after the others.
//
// Erase: erase() reserves the die for a block erase of tBERS (the blocks of
// one line on this die, one per plane, erased at once as a multi-plane erase;
// no data crosses the channel, only the erase command and, folded into the
// same bus transaction, its status poll: tBERS starts when it ends). A read arriving meanwhile suspends it under the
// program-suspend rules above (program_suspend, t_suspend, t_resume, and the
// aggregated streams' suspend_for_stream), as ONFI's erase suspend works like
// its program suspend.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/nand/flash_config.h"
#include "models/nand/page_address.h"

namespace ispsim::nand {

class Channel;

class Die : public sc_core::sc_module {
 public:
  // Waveform encoding of state_signal (4 bits); their names: state_encoding().
  enum State : uint8_t {
    kIdle = 0,
    kSense = 1,          // tR in progress
    kTransfer = 2,       // data-out or data-in on the channel
    kProgram = 3,        // tPROG in progress
    kSenseTransfer = 4,  // cache read: sensing the next group while transferring
    kHolding = 5,        // sensed data waiting for the channel or a buffer
    kSuspended = 6,      // a program or erase is suspended (or being suspended); no read under way
    kErase = 7,          // tBERS in progress
    kGcSense = 8,        // tR of a garbage-collection read (FlashClient::garbage_collection)
    kGcTransfer = 9,     // a garbage-collection read's data-out or program's data-in
    kGcProgram = 10,     // tPROG of a garbage-collection program
  };

  Die(sc_core::sc_module_name name, const FlashConfig& config, Channel& channel, unsigned index);

  unsigned index() const { return index_; }  // on its channel
  unsigned channel_index() const;

  // Issuers register once; on_die_idle goes to each in registration order,
  // background issuers (programs) after all the others.
  void add_client(FlashClient& client, bool background = false) {
    (background ? background_clients_ : clients_).push_back(&client);
  }

  // A new read may start: no sensing under way, the data register is free, and
  // no program is under way (a suspended one does not count).
  bool can_read() const {
    return array_ == kArrayIdle && !data_valid_ && (!program_pending_ || suspended_);
  }
  // A program may start: the die holds no data and no program, and no
  // aggregated stream has barred programs on its channel (Channel::bar_programs).
  bool can_program() const;
  // A reader wants this die: with program_suspend, suspends a program under way
  // (see above); otherwise nothing (the reader waits for on_die_idle).
  void request_read();
  bool suspended() const { return suspended_; }
  uint64_t suspends() const { return suspends_.value(); }
  uint64_t erases() const { return erases_.value(); }
  uint64_t erase_suspends() const { return erase_suspends_.value(); }
  // Time reads waited for this die's garbage collection (its erases, and the
  // senses, data and programs of GC's issuers, FlashClient::garbage_collection):
  // from a read's request to the die being free for reads (the suspend latency,
  // or the operation's end without suspend).
  uint64_t gc_read_wait_ps() const { return gc_read_wait_ps_; }

  // Starts sensing `count` (1..planes_per_die) pages of this die in distinct planes:
  // pages[tags[0]], ..., pages[tags[count - 1]]; each page is reported with its tag.
  // (Tags index the issuer's page list, so a read copies no list.) Precondition
  // can_read(); a violated precondition is a programming error (std::logic_error).
  // With `start_delay` the die is reserved now and starts sensing that much later
  // (the issuer knows now when it wants the sense to start).
  void read(const PageAddress* pages, const uint32_t* tags, unsigned count, FlashClient& client,
            const sc_core::sc_time& start_delay = sc_core::SC_ZERO_TIME);
  // Reserves the die for programming `page`; the data-in is queued on the channel.
  void program(const PageAddress& page, uint32_t tag, FlashClient& client);
  // Erases the block of `block` (its page is ignored) for `t_bers`; precondition
  // can_program(). The client hears on_block_erased(block, tag).
  void erase(const PageAddress& block, uint32_t tag, FlashClient& client, const sc_core::sc_time& t_bers);
  bool erasing() const { return erasing_; }
  // The next data-out is the first page of its sense (it carries the sense's status poll).
  bool first_of_sense() const { return groups_[output_slot_].next == 0; }

  // Channel side.
  FlashClient& output_client() const { return *groups_[output_slot_].client; }
  void begin_data_out();
  // Ends the data-out of the oldest output page; returns it and its issuer.
  FlashClient& end_data_out(PageAddress& page, uint32_t& tag);
  void begin_data_in();
  void end_data_in();

  void trace(vcd::Writer& writer);
  // The names of State in waveforms (GTKWave filter "die_state") and the README.
  static const vcd::Encoding& state_encoding();

  uint64_t pages_read() const { return pages_read_.value(); }
  uint64_t pages_programmed() const { return pages_programmed_.value(); }
  uint64_t senses() const { return senses_.value(); }
  // Nothing under way or held: no sense, data, transfer or program (pending or suspended).
  bool quiet() const {
    return array_ == kArrayIdle && !data_valid_ && !output_valid_ && !io_busy_ && !program_pending_ && !suspended_;
  }
  // A program under way and nothing else (its data is in, no read data held):
  // an aggregated stream may start on this die (suspend_for_stream()).
  bool only_programming() const {
    return array_ == kArrayProgramming && !data_valid_ && !output_valid_ && !io_busy_ && !suspended_;
  }
  // A program waiting for its data-in, or in it, and nothing else: an
  // aggregated stream may start on this die too (the channel knows when the
  // data-in ends, Channel::data_in_end_ps()).
  bool awaiting_data_in() const {
    return program_pending_ && array_ == kArrayIdle && !data_valid_ && !output_valid_ && !suspended_ &&
           !read_wanted_ && !stream_claimed_;
  }
  // Aggregated streams: the program under way is suspended as a read request
  // would suspend it (request_read(): when more than t_suspend is left and
  // program_suspend is on; otherwise its end is waited for). Returns when the
  // die can start sensing. resume_after_stream() resumes a suspended program
  // once the stream's last page of this die is out: it ends t_resume + the
  // tPROG that was left later. (A stream keeps a die busy until its last page,
  // so the page-accurate program stays suspended that long as well.)
  // A program still awaiting its data-in is suspended as it starts, as a read
  // requested meanwhile would have it (request_read(), read_wanted_).
  uint64_t suspend_for_stream(uint64_t now_ps);
  void resume_after_stream(uint64_t at_ps);
  // Offers the die to the program issuers while it can take a program (also when
  // its channel lifts a bar, Channel::release_programs_at).
  void offer_to_programs();
  // Reads scheduled without events (nand::PipelineSchedule, the aggregated
  // streaming mode): counted in the statistics as if performed.
  void account_aggregated_reads(uint64_t pages, uint64_t senses) {
    pages_read_ += pages;
    senses_ += senses;
    sense_ps_ += senses * config_.t_read.value();
    transfer_ps_ += config_.data_outs_ps(pages, senses);
  }

 private:
  struct Group {
    PageAddress pages[kMaxPlanes];
    uint32_t tags[kMaxPlanes];
    unsigned count = 0;
    unsigned next = 0;  // next page of the group to transfer
    FlashClient* client = nullptr;
  };
  enum Array : uint8_t { kArrayIdle, kArraySensing, kArrayProgramming, kArraySuspending };

  void on_sense_start();
  void on_sense_done();
  void on_program_done();
  void on_suspended();
  void resume_if_unwanted();
  void move_to_output();
  void notify_idle();
  void update_state();
  State state() const;
  State as_gc_work(State s) const;  // the state's GC variant when the work under way is GC's
  void start_array_operation();  // tPROG or tBERS, when the bus transaction before it has ended

  const FlashConfig& config_;
  Channel& channel_;
  const unsigned index_;
  std::vector<FlashClient*> clients_;
  std::vector<FlashClient*> background_clients_;

  Array array_ = kArrayIdle;
  bool data_valid_ = false;    // data_ holds a group (being sensed or sensed)
  bool output_valid_ = false;  // output_ holds pages to transfer out
  bool io_busy_ = false;       // a data-out or data-in is under way
  bool program_pending_ = false;
  bool sense_waiting_start_ = false;  // reserved by a delayed read, not sensing yet
  bool suspended_ = false;            // a program is suspended; reads may use the die
  bool read_wanted_ = false;          // a read was requested while the program waited for its data-in
  bool erasing_ = false;              // the operation under way (or suspended) is an erase
  uint64_t program_end_ps_ = 0;       // when the program under way ends
  uint64_t array_op_ps_ = 0;          // tPROG or tBERS of the pending program or erase
  uint64_t io_ps_ = 0;                // bus time of the data-out under way
  uint64_t program_left_ps_ = 0;      // tPROG left of a suspended program
  bool stream_suspended_ = false;     // suspended by suspend_for_stream()
  bool stream_claimed_ = false;       // claimed by a stream before its program's data-in ended
  uint64_t stream_resume_at_ps_ = 0;  // resume_after_stream() while claimed (0: not called yet)
  // Two register sets: data_slot_ is the data register's group, output_slot_ the
  // group being transferred. Without cache read both are the same slot; with
  // cache read a move to the cache register just swaps slots (no copy).
  Group groups_[2];
  unsigned data_slot_ = 0;
  unsigned output_slot_ = 0;
  PageAddress program_page_;
  uint32_t program_tag_ = 0;
  FlashClient* program_client_ = nullptr;

  sc_core::sc_event sense_start_;  // only when the state is traced (exact waveform)
  sc_core::sc_event sense_done_;
  sc_core::sc_event program_done_;
  sc_core::sc_event suspended_event_;

  uint64_t sense_ps_ = 0;
  uint64_t transfer_ps_ = 0;
  uint64_t program_ps_ = 0;
  uint64_t erase_ps_ = 0;
  uint64_t gc_read_wait_ps_ = 0;
  uint64_t read_waits_since_ps_ = UINT64_MAX;  // a read waits behind GC since then (UINT64_MAX: none)
  // The die's program or erase is GC's; it holds (or senses) a GC read's data.
  bool programming_for_gc() const;
  bool reading_for_gc() const;
  void end_gc_wait();
  uint64_t suspended_ps_ = 0;   // suspend latency + time suspended, summed
  uint64_t suspend_start_ps_ = 0;
  // Statistics under <name>: counters declared once, here, and counted where
  // the event happens; formulas (die.cc) for derived values.
  stats::Group stats_;
  stats::Counter& pages_read_ = stats_.counter("pages_read", "count", "pages transferred out of this die");
  stats::Counter& pages_programmed_ = stats_.counter("pages_programmed", "count", "pages programmed into this die");
  stats::Counter& senses_ =
      stats_.counter("senses", "count", "array sense operations (a multi-plane read counts once)");
  stats::Counter& suspends_ = stats_.counter("program_suspends", "count", "programs suspended for a read");
  stats::Counter& erases_ = stats_.counter("block_erases", "count", "erase operations (one per die and line)");
  stats::Counter& erase_suspends_ = stats_.counter("erase_suspends", "count", "erases suspended for a read");
  // The counter a suspension of the operation under way counts in.
  stats::Counter& suspensions() { return erasing_ ? erase_suspends_ : suspends_; }
  vcd::Signal state_signal_;
};

}  // namespace ispsim::nand
