#include "models/nand/pipeline_schedule.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ispsim::nand {

namespace {
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
}  // namespace

PipelineSchedule::PipelineSchedule(const FlashConfig& config)
    : config_(config),
      queues_(size_t(config.channels) * config.dies_per_channel),
      dies_(config.dies_per_channel) {}

void PipelineSchedule::assign(const std::vector<PageAddress>& pages) {
  pages_ = &pages;
  for (std::vector<uint32_t>& queue : queues_) queue.clear();  // keeps its capacity
  for (uint32_t i = 0; i < pages.size(); ++i)
    queues_[size_t(pages[i].channel) * config_.dies_per_channel + pages[i].die].push_back(i);
}

void PipelineSchedule::start_sense(Die& die, unsigned d, uint64_t now) {
  const std::vector<uint32_t>& queue = *die.queue;
  if (die.next == queue.size()) return;
  // A multi-plane read takes the die's next pages while their planes differ.
  unsigned count = 0, planes_used = 0;
  die.data_first = die.next;
  while (count < config_.planes_per_die && die.next < queue.size()) {
    const unsigned bit = 1u << (*pages_)[queue[die.next]].plane;
    if (planes_used & bit) break;
    planes_used |= bit;
    ++count;
    ++die.next;
  }
  die.data_count = count;
  die.data_valid = true;
  die.sensing = true;
  die.sense_end = now + config_.t_read.value();
  ++senses_[d];
}

void PipelineSchedule::move_to_output(Die& die, unsigned d) {
  if (!die.data_valid || die.sensing || die.output_valid) return;
  die.output_valid = true;
  die.out_first = die.data_first;
  die.out_count = die.data_count;
  die.out_next = 0;
  if (config_.cache_read) die.data_valid = false;
  for (size_t i = 0; i < die.out_count; ++i) fifo_.push_back(d);
}

void PipelineSchedule::run(unsigned channel, uint64_t start_ps, unsigned buffers, const PageTime& page_time,
                           uint64_t consumer_from_ps, const uint64_t* die_ready_ps, uint64_t channel_free_ps) {
  if (pages_ == nullptr) throw std::logic_error("PipelineSchedule::run() before assign()");
  const unsigned D = config_.dies_per_channel;
  size_t total = 0;
  for (unsigned d = 0; d < D; ++d) {
    dies_[d] = Die{};
    dies_[d].queue = &queues_[size_t(channel) * D + d];
    total += dies_[d].queue->size();
  }
  out_.clear();
  out_.reserve(total);
  fifo_.clear();
  fifo_head_ = 0;
  senses_.assign(D, 0);
  pages_by_die_.assign(D, 0);
  for (unsigned d = 0; d < D; ++d) pages_by_die_[d] = dies_[d].queue->size();
  last_out_.assign(D, 0);
  for (unsigned d = 0; d < D; ++d)
    start_sense(dies_[d], d, die_ready_ps ? std::max(start_ps, die_ready_ps[d]) : start_ps);

  const uint64_t t_out = config_.t_page_transfer.value();
  const bool cache_read = config_.cache_read;
  uint64_t now = start_ps;
  bool busy = false;
  uint64_t transfer_end = 0;
  unsigned transfer_die = 0;
  uint64_t consumer_busy = consumer_from_ps;
  while (out_.size() < total) {
    uint64_t t_sense = kNever;
    unsigned sense_die = 0;
    for (unsigned d = 0; d < D; ++d) {
      if (dies_[d].sensing && dies_[d].sense_end < t_sense) {
        t_sense = dies_[d].sense_end;
        sense_die = d;
      }
    }
    const uint64_t t_transfer = busy ? transfer_end : kNever;
    uint64_t t_grant = kNever;
    if (!busy && fifo_head_ < fifo_.size()) {
      // Data-out number k (= pages arrived) needs the buffer of page k - buffers.
      const size_t k = out_.size();
      t_grant = buffers == 0 || k < buffers ? now : std::max(now, out_[k - buffers].done_ps);
      t_grant = std::max(t_grant, channel_free_ps);
    }
    if (t_sense <= t_transfer && t_sense <= t_grant) {
      now = t_sense;
      Die& die = dies_[sense_die];
      die.sensing = false;
      move_to_output(die, sense_die);
      if (!die.data_valid) start_sense(die, sense_die, now);
    } else if (t_transfer <= t_grant) {
      now = t_transfer;
      busy = false;
      Die& die = dies_[transfer_die];
      const uint32_t index = (*die.queue)[die.out_first + die.out_next];
      last_out_[transfer_die] = now;
      if (++die.out_next == die.out_count) {
        die.output_valid = false;
        if (!cache_read) die.data_valid = false;
        move_to_output(die, transfer_die);
        if (!die.data_valid && !die.sensing) start_sense(die, transfer_die, now);
      }
      Page page;
      page.index = index;
      page.arrival_ps = now;
      page.done_ps = now;
      if (buffers > 0) {
        page.done_ps = std::max(now, consumer_busy) + page_time(index, std::max(now, consumer_from_ps));
        consumer_busy = page.done_ps;
      }
      out_.push_back(page);
    } else {
      now = t_grant;
      transfer_die = fifo_[fifo_head_++];
      busy = true;
      transfer_end = now + t_out;
    }
  }
}

}  // namespace ispsim::nand
