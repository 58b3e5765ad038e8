#include "models/nand/channel.h"

#include <algorithm>
#include <stdexcept>

namespace ispsim::nand {

Channel::Channel(sc_core::sc_module_name name, const FlashConfig& config, unsigned index)
    : sc_core::sc_module(name), config_(config), index_(index), stats_(this->name()) {
  SC_HAS_PROCESS(Channel);
  SC_METHOD(on_transfer_done);
  sensitive << transfer_done_;
  dont_initialize();
  SC_METHOD(try_grant);
  sensitive << grant_;
  dont_initialize();
  SC_METHOD(on_programs_released);
  sensitive << programs_released_;
  dont_initialize();

  for (unsigned d = 0; d < config_.dies_per_channel; ++d) {
    const std::string die_name = "die" + std::to_string(d);
    dies_.push_back(std::make_unique<Die>(die_name.c_str(), config_, *this, d));
  }
  ring_.resize(size_t(config_.dies_per_channel) * (config_.planes_per_die + 1));

  const uint64_t page_bytes = config_.page_bytes;
  stats_.formula_integer("bytes_out", "bytes", "bytes moved from dies to the controller",
                         [this, page_bytes] { return transfers_out_.value() * page_bytes; });
  stats_.formula_integer("bytes_in", "bytes", "bytes moved from the controller to dies",
                         [this, page_bytes] { return transfers_in_.value() * page_bytes; });
  stats_.formula("busy_time", "ns", "time the bus was transferring",
                 [this] { return busy_ps_ * 1e-3; });
  stats_.formula("command_time", "ns",
                 "of busy_time: command, address and status cycles and turnaround times (tWB, tWHR, tRHW, tADL, tCCS)",
                 [this] { return command_ps_ * 1e-3; });
  stats_.formula("utilization", "ratio", "busy time / simulated time so far", [this] {
    const double now = double(sc_core::sc_time_stamp().value());
    return now > 0 ? double(busy_ps_) / now : 0.0;
  });
  stats_.formula("bandwidth", "GB/s", "bytes moved (both directions) / simulated time so far, GB = 1e9 B",
                 [this, page_bytes] {
                   const double now_s = sc_core::sc_time_stamp().to_seconds();
                   return now_s > 0 ? double((transfers_out_.value() + transfers_in_.value()) * page_bytes) / now_s / 1e9
                                    : 0.0;
                 });
}

void Channel::bar_programs() {
  programs_released_.cancel();
  programs_barred_ = true;
}

void Channel::release_programs_at(uint64_t at_ps) {
  if (!programs_barred_) throw std::logic_error(std::string(name()) + ": release_programs_at() without a bar");
  const uint64_t now = sc_core::sc_time_stamp().value();
  programs_released_.notify(sc_core::sc_time::from_value(std::max(at_ps, now) - now));
}

void Channel::on_programs_released() {
  programs_barred_ = false;
  for (auto& die : dies_) die->offer_to_programs();
}

void Channel::enqueue(Die& die, bool data_in) {
  if (queued_ == ring_.size()) throw std::logic_error(std::string(name()) + ": request queue overflow");
  const uint64_t now = sc_core::sc_time_stamp().value();
  // Requests raised at the same instant go in die order, whatever order the
  // kernel ran the dies in (a fixed-priority arbiter; nand::PipelineSchedule
  // takes same-instant events die by die as well).
  size_t slot = queued_;
  while (slot > 0) {
    const Request& before = ring_[(head_ + slot - 1) % ring_.size()];
    if (before.raised_ps != now || before.die->index() <= die.index()) break;
    ring_[(head_ + slot) % ring_.size()] = before;
    --slot;
  }
  ring_[(head_ + slot) % ring_.size()] = Request{&die, data_in, now};
  ++queued_;
  kick();
}

// A head raised at this instant is granted a delta later, once the requests
// the dies raise in the same delta are in (one of a lower die may still come);
// an older head at once.
void Channel::kick() {
  if (busy_ || queued_ == 0) return;  // the transfer's end or the next request kicks again
  if (ring_[head_].raised_ps < sc_core::sc_time_stamp().value()) {
    try_grant();
  } else {
    grant_.notify(sc_core::SC_ZERO_TIME);
  }
}

void Channel::try_grant() {
  if (busy_ || queued_ == 0) return;
  const Request request = ring_[head_];
  if (!request.data_in) {
    FlashClient& client = request.die->output_client();
    if (!client.may_start_data_out(index_)) return;
    client.on_data_out_started(index_);
  }
  if (++head_ == ring_.size()) head_ = 0;
  --queued_;
  busy_ = true;
  current_ = request;
  busy_signal_.set(1);
  owner_signal_.set(request.die->index() + 1);
  if (request.data_in) {
    request.die->begin_data_in();
  } else {
    request.die->begin_data_out();
  }
  const uint64_t duration = duration_ps(request);
  busy_ps_ += duration;
  const bool erase = request.data_in && request.die->erasing();
  command_ps_ += duration - (erase ? 0 : config_.t_page_transfer.value());
  transfer_end_ps_ = sc_core::sc_time_stamp().value() + duration;
  transfer_done_.notify(sc_core::sc_time::from_value(duration));
}

uint64_t Channel::duration_ps(const Request& request) const {
  if (!request.data_in) return config_.data_out_ps(request.die->first_of_sense());
  return request.die->erasing() ? config_.erase_command_ps() : config_.data_in_ps();
}

bool Channel::only_data_ins() const {
  if (busy_ && !current_.data_in) return false;
  for (size_t i = 0; i < queued_; ++i)
    if (!ring_[(head_ + i) % ring_.size()].data_in) return false;
  return true;
}

uint64_t Channel::data_ins_end_ps(uint64_t now_ps) const {
  uint64_t end = busy_ ? transfer_end_ps_ : now_ps;
  for (size_t i = 0; i < queued_; ++i) end += duration_ps(ring_[(head_ + i) % ring_.size()]);
  return end;
}

uint64_t Channel::data_in_end_ps(const Die& die) const {
  if (busy_ && current_.die == &die) return transfer_end_ps_;
  uint64_t end = busy_ ? transfer_end_ps_ : sc_core::sc_time_stamp().value();
  for (size_t i = 0; i < queued_; ++i) {
    const Request& request = ring_[(head_ + i) % ring_.size()];
    end += duration_ps(request);
    if (request.die == &die) return end;
  }
  throw std::logic_error(std::string(name()) + ": " + die.name() + " has no data-in under way or queued");
}

void Channel::on_transfer_done() {
  busy_ = false;
  busy_signal_.set(0);
  owner_signal_.set(0);
  const Request done = current_;
  if (done.data_in) {
    ++transfers_in_;
    done.die->end_data_in();
  } else {
    ++transfers_out_;
    PageAddress page;
    uint32_t tag = 0;
    FlashClient& client = done.die->end_data_out(page, tag);
    client.on_page_read(page, tag);
  }
  kick();
}

vcd::Encoding Channel::owner_encoding(unsigned dies) {
  vcd::Encoding encoding{"channel_owner", {{0, "free"}}};
  for (unsigned d = 0; d < dies; ++d) encoding.values.push_back({d + 1, "die" + std::to_string(d)});
  return encoding;
}

void Channel::trace(vcd::Writer& writer) {
  const vcd::Encoding owner = owner_encoding(die_count());
  writer.add(std::string(name()) + ".busy", 1, busy_signal_, {vcd::Role::kChannel, static_cast<int>(index_)});
  writer.add(std::string(name()) + ".owner", 6, owner_signal_, {vcd::Role::kChannel, static_cast<int>(index_), &owner});
  for (auto& die : dies_) die->trace(writer);
}

}  // namespace ispsim::nand
