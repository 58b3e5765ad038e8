#include "models/nand/stream_reader.h"

#include <stdexcept>

#include "common/error.h"

namespace ispsim::nand {

StreamReader::StreamReader(sc_core::sc_module_name name, FlashArray& flash, const StreamConfig& config)
    : sc_core::sc_module(name), flash_(flash), config_(config), stats_(this->name()) {
  const FlashConfig& fc = flash_.config();
  for (unsigned c = 0; c < fc.channels; ++c) {
    const std::string consumer_name = "consumer" + std::to_string(c);
    consumers_.push_back(std::make_unique<PageConsumer>(
        consumer_name.c_str(), flash_.channel(c), config_.buffers_per_channel, config_.consume_per_page,
        fc.page_bytes,
        [this](const PageAddress& page, uint32_t tag, const sc_core::sc_time& done_at) {
          on_consumed(page, tag, done_at);
        }));
  }
  flash_.add_client(*this);

  const uint64_t page_bytes = fc.page_bytes;
  stats_.formula_integer("bytes_delivered", "bytes", "bytes consumed, over all streams",
                         [this, page_bytes] { return total_delivered_.value() * page_bytes; });
  stats_.formula("stream_time", "ns", "time from start() to the last page consumed, summed over streams",
                 [this] { return stream_ps_ * 1e-3; });
  stats_.formula("bandwidth", "GB/s", "bytes delivered / stream time, GB = 1e9 B", [this, page_bytes] {
    return stream_ps_ > 0 ? double(total_delivered_.value() * page_bytes) / (stream_ps_ * 1e-12) / 1e9 : 0.0;
  });
}

void StreamReader::start(std::vector<PageAddress> pages, const std::string& where) {
  if (active_) throw std::logic_error(std::string(name()) + ": start() while a stream is under way");
  if (pages.size() >= UINT32_MAX) throw BadInput(where, "more than 2^32 - 1 pages in one stream");
  const FlashConfig& fc = flash_.config();
  for (size_t i = 0; i < pages.size(); ++i) flash_.check_address(pages[i], where, i);
  pages_ = std::move(pages);
  delivered_ = 0;
  arrived_ = 0;
  ++streams_;
  started_at_ = sc_core::sc_time_stamp();
  finished_at_ = started_at_;

  // Page indices by queue (die in PIPELINED, channel in SEQUENTIAL), list order kept.
  const bool sequential = config_.mode == ReadMode::kSequential;
  queues_.build(pages_, sequential ? fc.channels : fc.dies(), [&](const PageAddress& p) -> size_t {
    return sequential ? p.channel : size_t(p.channel) * fc.dies_per_channel + p.die;
  });
  channel_in_flight_.assign(fc.channels, 0);
  channel_ready_ps_.assign(fc.channels, 0);

  if (pages_.empty()) {
    done_event_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  active_ = true;
  if (sequential) {
    for (unsigned c = 0; c < fc.channels; ++c) issue_for_channel(c);
  } else {
    for (unsigned c = 0; c < fc.channels; ++c) {
      for (unsigned d = 0; d < fc.dies_per_channel; ++d) issue_for_die(flash_.die(c, d));
    }
  }
}

void StreamReader::issue_for_die(Die& die) {
  const FlashConfig& fc = flash_.config();
  const size_t q = size_t(die.channel_index()) * fc.dies_per_channel + die.index();
  if (queues_.empty(q)) return;
  if (!die.can_read()) return die.request_read();  // a program may be suspended for it
  // A multi-plane read takes the next pages of this die while their planes differ.
  const uint32_t* first = nullptr;
  const unsigned count = queues_.take_multi_plane(q, pages_, fc.planes_per_die, &first);
  die.read(pages_.data(), first, count, *this);
}

void StreamReader::issue_for_channel(unsigned channel) {
  if (channel_in_flight_[channel] || queues_.empty(channel)) return;
  const uint32_t* index = queues_.peek(channel);
  Die& die = flash_.die(channel, pages_[*index].die);
  if (!die.can_read()) return die.request_read();  // busy: retried on_die_idle (a program may be suspended)
  queues_.pop(channel);
  channel_in_flight_[channel] = 1;
  // The sense starts when the consumer has finished the channel's previous page.
  const uint64_t now = sc_core::sc_time_stamp().value();
  const uint64_t ready = channel_ready_ps_[channel];
  die.read(pages_.data(), index, 1, *this, sc_core::sc_time::from_value(ready > now ? ready - now : 0));
}

void StreamReader::on_die_idle(Die& die) {
  if (!active_) return;
  if (config_.mode == ReadMode::kSequential) {
    issue_for_channel(die.channel_index());
  } else {
    issue_for_die(die);
  }
}

bool StreamReader::may_start_data_out(unsigned channel) {
  return consumers_[channel]->has_free_buffer();
}

void StreamReader::on_data_out_started(unsigned channel) { consumers_[channel]->reserve_buffer(); }

void StreamReader::on_page_read(const PageAddress& page, uint32_t tag) {
  const sc_core::sc_time done = consumers_[page.channel]->page_arrived(page, tag);
  if (++arrived_ == pages_.size()) {
    for (auto& consumer : consumers_) consumer->flush();
  }
  if (config_.mode == ReadMode::kSequential) {
    channel_ready_ps_[page.channel] = done.value();
    channel_in_flight_[page.channel] = 0;
    issue_for_channel(page.channel);
  }
}

void StreamReader::on_consumed(const PageAddress& page, uint32_t tag, const sc_core::sc_time& done_at) {
  ++delivered_;
  ++total_delivered_;
  if (done_at > finished_at_) finished_at_ = done_at;
  if (delivery_) delivery_(page, tag, done_at);
  if (delivered_ == pages_.size()) {
    active_ = false;
    stream_ps_ += (finished_at_ - started_at_).value();
    done_event_.notify(sc_core::SC_ZERO_TIME);
  }
}

void StreamReader::trace(vcd::Writer& writer) {
  for (auto& consumer : consumers_) consumer->trace(writer);
}

}  // namespace ispsim::nand
