#include "models/nand/die.h"

#include <algorithm>
#include <stdexcept>

#include "models/nand/channel.h"

namespace ispsim::nand {

Die::Die(sc_core::sc_module_name name, const FlashConfig& config, Channel& channel, unsigned index)
    : sc_core::sc_module(name), config_(config), channel_(channel), index_(index), stats_(this->name()) {
  SC_HAS_PROCESS(Die);
  SC_METHOD(on_sense_start);
  sensitive << sense_start_;
  dont_initialize();
  SC_METHOD(on_sense_done);
  sensitive << sense_done_;
  dont_initialize();
  SC_METHOD(on_program_done);
  sensitive << program_done_;
  dont_initialize();
  SC_METHOD(on_suspended);
  sensitive << suspended_event_;
  dont_initialize();

  const uint64_t page_bytes = config_.page_bytes;
  stats_.formula_integer("bytes_read", "bytes", "bytes transferred out of this die",
                         [this, page_bytes] { return pages_read() * page_bytes; });
  stats_.formula_integer("bytes_programmed", "bytes", "bytes programmed into this die",
                         [this, page_bytes] { return pages_programmed() * page_bytes; });
  stats_.formula("sense_time", "ns", "time spent sensing (tR)", [this] { return sense_ps_ * 1e-3; });
  stats_.formula("transfer_time", "ns", "time spent in data-out and data-in on the channel",
                 [this] { return transfer_ps_ * 1e-3; });
  stats_.formula("program_time", "ns", "time spent programming (tPROG)",
                 [this] { return program_ps_ * 1e-3; });
  stats_.formula("erase_time", "ns", "time spent erasing (tBERS)", [this] { return erase_ps_ * 1e-3; });
  stats_.formula("suspended_time", "ns", "time a program spent suspending or suspended (resume overhead excluded)",
                 [this] { return suspended_ps_ * 1e-3; });
}

unsigned Die::channel_index() const { return channel_.index(); }

void Die::read(const PageAddress* pages, const uint32_t* tags, unsigned count, FlashClient& client,
               const sc_core::sc_time& start_delay) {
  if (!can_read()) throw std::logic_error(std::string(name()) + ": read while busy");
  if (count == 0 || count > config_.planes_per_die) {
    throw std::logic_error(std::string(name()) + ": multi-plane read of " + std::to_string(count) +
                           " pages");
  }
  Group& group = groups_[data_slot_];
  unsigned planes_used = 0;
  for (unsigned i = 0; i < count; ++i) {
    const PageAddress& page = pages[tags[i]];
    if (page.plane >= config_.planes_per_die || (planes_used & (1u << page.plane))) {
      throw std::logic_error(std::string(name()) + ": multi-plane read needs distinct planes");
    }
    planes_used |= 1u << page.plane;
    group.pages[i] = page;
    group.tags[i] = tags[i];
  }
  group.count = count;
  group.next = 0;
  group.client = &client;
  data_valid_ = true;
  array_ = kArraySensing;
  ++senses_;
  sense_ps_ += config_.t_read.value();
  sense_done_.notify(start_delay + config_.t_read);
  // The waveform shows the sense from its true start; without a waveform the
  // start needs no event of its own.
  if (start_delay != sc_core::SC_ZERO_TIME && state_signal_.attached()) {
    sense_waiting_start_ = true;
    sense_start_.notify(start_delay);
  }
  update_state();
}

void Die::on_sense_start() {
  sense_waiting_start_ = false;
  update_state();
}

void Die::on_sense_done() {
  array_ = kArrayIdle;
  move_to_output();
  update_state();
  if (can_read()) notify_idle();
}

void Die::move_to_output() {
  if (!data_valid_ || array_ == kArraySensing || output_valid_) return;
  output_slot_ = data_slot_;
  output_valid_ = true;
  // With cache read the data register is free again; without, it still holds the pages.
  if (config_.cache_read) {
    data_valid_ = false;
    data_slot_ = output_slot_ ^ 1u;
  }
  const unsigned count = groups_[output_slot_].count;
  for (unsigned i = 0; i < count; ++i) channel_.request_data_out(*this);
}

void Die::begin_data_out() {
  io_busy_ = true;
  io_ps_ = config_.data_out_ps(first_of_sense());
  update_state();
}

FlashClient& Die::end_data_out(PageAddress& page, uint32_t& tag) {
  Group& output = groups_[output_slot_];
  FlashClient& client = *output.client;
  page = output.pages[output.next];
  tag = output.tags[output.next];
  ++output.next;
  io_busy_ = false;
  ++pages_read_;
  transfer_ps_ += io_ps_;
  const bool freed = output.next == output.count;
  if (freed) {
    output_valid_ = false;
    if (!config_.cache_read) data_valid_ = false;
    move_to_output();  // cache read: a group sensed meanwhile takes the cache register
  }
  update_state();
  if (freed && can_read()) notify_idle();
  return client;
}

void Die::program(const PageAddress& page, uint32_t tag, FlashClient& client) {
  if (!can_program()) throw std::logic_error(std::string(name()) + ": program while busy");
  program_pending_ = true;
  program_page_ = page;
  program_tag_ = tag;
  program_client_ = &client;
  array_op_ps_ = config_.t_prog.value();
  channel_.request_data_in(*this);
}

void Die::erase(const PageAddress& block, uint32_t tag, FlashClient& client, const sc_core::sc_time& t_bers) {
  if (!can_program()) throw std::logic_error(std::string(name()) + ": erase while busy");
  program_pending_ = true;
  erasing_ = true;
  program_page_ = block;
  program_tag_ = tag;
  program_client_ = &client;
  array_op_ps_ = t_bers.value();
  if (config_.erase_command_ps() > 0)
    channel_.request_data_in(*this);  // the erase command first
  else
    start_array_operation();
}

void Die::start_array_operation() {
  array_ = kArrayProgramming;
  (erasing_ ? erase_ps_ : program_ps_) += array_op_ps_;
  program_end_ps_ = sc_core::sc_time_stamp().value() + array_op_ps_;
  program_done_.notify(sc_core::sc_time::from_value(array_op_ps_));
  update_state();
}

void Die::begin_data_in() {
  io_busy_ = true;
  update_state();
}

void Die::end_data_in() {
  io_busy_ = false;
  transfer_ps_ += erasing_ ? config_.erase_command_ps() : config_.data_in_ps();
  start_array_operation();
  if (read_wanted_) {
    read_wanted_ = false;
    request_read();
  }
  if (stream_claimed_) {
    stream_claimed_ = false;
    const uint64_t resume_at = stream_resume_at_ps_;
    stream_resume_at_ps_ = 0;
    suspend_for_stream(sc_core::sc_time_stamp().value());
    if (resume_at != 0) resume_after_stream(resume_at);
  }
}

void Die::end_gc_wait() {
  if (read_waits_since_ps_ == UINT64_MAX) return;
  gc_read_wait_ps_ += sc_core::sc_time_stamp().value() - read_waits_since_ps_;
  read_waits_since_ps_ = UINT64_MAX;
}

bool Die::programming_for_gc() const {
  return program_pending_ && (erasing_ || program_client_->garbage_collection());
}

bool Die::reading_for_gc() const {
  const Group& data = groups_[data_slot_];
  const Group& output = groups_[output_slot_];
  return (data_valid_ && data.client->garbage_collection()) || (output_valid_ && output.client->garbage_collection());
}

void Die::on_program_done() {
  array_ = kArrayIdle;
  program_pending_ = false;
  const bool erased = erasing_;
  erasing_ = false;
  end_gc_wait();
  ++(erased ? erases_ : pages_programmed_);
  update_state();
  if (erased)
    program_client_->on_block_erased(program_page_, program_tag_);
  else
    program_client_->on_page_programmed(program_page_, program_tag_);
  if (can_read()) notify_idle();
}

void Die::request_read() {
  if (((programming_for_gc() && !suspended_) || reading_for_gc()) && read_waits_since_ps_ == UINT64_MAX)
    read_waits_since_ps_ = sc_core::sc_time_stamp().value();
  if (!config_.program_suspend) return;
  // A program still waiting for its data-in is suspended as soon as it starts.
  if (program_pending_ && !suspended_ && array_ == kArrayIdle) read_wanted_ = true;
  if (array_ != kArrayProgramming) return;
  const uint64_t now = sc_core::sc_time_stamp().value();
  const uint64_t left = program_end_ps_ > now ? program_end_ps_ - now : 0;
  if (left <= config_.t_suspend.value()) return;  // waiting for the end is quicker
  program_done_.cancel();
  program_left_ps_ = left;
  array_ = kArraySuspending;
  ++suspensions();
  suspend_start_ps_ = now;
  suspended_event_.notify(config_.t_suspend);
  update_state();
}

uint64_t Die::suspend_for_stream(uint64_t now_ps) {
  if (stream_claimed_)  // a stream's pages of this die end after its program's data-in
    throw std::logic_error(std::string(name()) + ": claimed by a second stream before its program's data-in ended");
  if (awaiting_data_in()) {
    const uint64_t program_start = channel_.data_in_end_ps(*this);
    if (!config_.program_suspend || array_op_ps_ <= config_.t_suspend.value()) return program_start + array_op_ps_;
    stream_claimed_ = true;  // end_data_in() suspends the program
    return program_start + config_.t_suspend.value();
  }
  if (array_ != kArrayProgramming) return now_ps;
  const uint64_t left = program_end_ps_ > now_ps ? program_end_ps_ - now_ps : 0;
  const bool waits_for_end = !config_.program_suspend || left <= config_.t_suspend.value();
  if (programming_for_gc()) gc_read_wait_ps_ += waits_for_end ? left : config_.t_suspend.value();
  if (waits_for_end) return now_ps + left;
  program_done_.cancel();
  stream_suspended_ = true;
  program_left_ps_ = left;
  ++suspensions();
  suspend_start_ps_ = now_ps;
  return now_ps + config_.t_suspend.value();
}

void Die::resume_after_stream(uint64_t at_ps) {
  if (stream_claimed_) {  // its data-in has not ended yet
    stream_resume_at_ps_ = at_ps;
    return;
  }
  if (!stream_suspended_) return;
  stream_suspended_ = false;
  const uint64_t now = sc_core::sc_time_stamp().value();
  const uint64_t resume = std::max(at_ps, now);
  suspended_ps_ += resume - suspend_start_ps_;
  program_end_ps_ = resume + config_.t_resume.value() + program_left_ps_;
  program_done_.notify(sc_core::sc_time::from_value(program_end_ps_ - now));
}

bool Die::can_program() const {
  return array_ == kArrayIdle && !data_valid_ && !output_valid_ && !program_pending_ && !channel_.programs_barred();
}

void Die::offer_to_programs() {
  for (FlashClient* client : background_clients_) {
    if (!can_program()) break;
    client->on_die_idle(*this);
  }
}

void Die::on_suspended() {
  array_ = kArrayIdle;
  suspended_ = true;
  end_gc_wait();
  update_state();
  notify_idle();
}

// A suspended program resumes once the die holds no read data and no reader
// took the die when it was offered.
void Die::resume_if_unwanted() {
  if (!suspended_ || array_ != kArrayIdle || data_valid_ || output_valid_) return;
  suspended_ = false;
  const uint64_t now = sc_core::sc_time_stamp().value();
  suspended_ps_ += now - suspend_start_ps_;
  array_ = kArrayProgramming;
  const uint64_t rest = config_.t_resume.value() + program_left_ps_;
  program_end_ps_ = now + rest;
  program_done_.notify(sc_core::sc_time::from_value(rest));
  update_state();
}

void Die::notify_idle() {
  end_gc_wait();  // the die is free for reads
  for (FlashClient* client : clients_) {
    if (!can_read()) break;  // an earlier client took the die
    client->on_die_idle(*this);
  }
  resume_if_unwanted();
  offer_to_programs();
}

void Die::update_state() { state_signal_.set(as_gc_work(state())); }

Die::State Die::as_gc_work(State s) const {
  switch (s) {
    case kSense: return groups_[data_slot_].client->garbage_collection() ? kGcSense : kSense;
    case kTransfer: {
      const FlashClient* client = program_pending_ && array_ == kArrayIdle && !output_valid_
                                      ? program_client_  // a data-in
                                      : groups_[output_slot_].client;
      return client->garbage_collection() ? kGcTransfer : kTransfer;
    }
    case kProgram: return program_client_->garbage_collection() ? kGcProgram : kProgram;
    default: return s;
  }
}

Die::State Die::state() const {
  State s;
  if (array_ == kArrayProgramming) {
    s = erasing_ ? kErase : kProgram;
  } else if (array_ == kArraySuspending || (suspended_ && array_ == kArrayIdle && !io_busy_ && !data_valid_ && !output_valid_)) {
    s = kSuspended;
  } else if (array_ == kArraySensing && !sense_waiting_start_) {
    s = io_busy_ ? kSenseTransfer : kSense;
  } else if (io_busy_) {
    s = kTransfer;
  } else if ((data_valid_ && array_ != kArraySensing) || output_valid_) {
    s = kHolding;
  } else {
    s = kIdle;
  }
  return s;
}

const vcd::Encoding& Die::state_encoding() {
  static const vcd::Encoding encoding{"die_state",
                                      {{kIdle, "idle"},
                                       {kSense, "sense"},
                                       {kTransfer, "transfer"},
                                       {kProgram, "program"},
                                       {kSenseTransfer, "sense+transfer"},
                                       {kHolding, "holding"},
                                       {kSuspended, "suspended"},
                                       {kErase, "erase"},
                                       {kGcSense, "gc_sense"},
                                       {kGcTransfer, "gc_transfer"},
                                       {kGcProgram, "gc_program"}}};
  return encoding;
}

void Die::trace(vcd::Writer& writer) {
  writer.add(std::string(name()) + ".state", 4, state_signal_,
             {vcd::Role::kDie, static_cast<int>(channel_index()), &state_encoding()});
}

}  // namespace ispsim::nand
