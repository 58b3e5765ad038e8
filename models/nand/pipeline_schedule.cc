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
  assigned_ = true;
  last_channel_ = kNoRun;
  for (std::vector<Queued>& queue : queues_) queue.clear();  // keeps its capacity
  for (uint32_t i = 0; i < pages.size(); ++i)
    queues_[size_t(pages[i].channel) * config_.dies_per_channel + pages[i].die].push_back({i, pages[i].plane});
}

void PipelineSchedule::start_sense(Die& die, unsigned d, uint64_t now) {
  const std::vector<Queued>& queue = *die.queue;
  if (die.next == queue.size()) return;
  // A multi-plane read takes the die's next pages while their planes differ.
  unsigned count = 0, planes_used = 0;
  die.data_first = die.next;
  while (count < config_.planes_per_die && die.next < queue.size()) {
    const unsigned bit = 1u << queue[die.next].plane;
    if (planes_used & bit) break;
    planes_used |= bit;
    ++count;
    ++die.next;
  }
  die.data_count = count;
  die.data_valid = true;
  sense_end_[d] = now + config_.t_read.value();
  ++senses_[d];
}

void PipelineSchedule::move_to_output(Die& die, unsigned d) {
  if (!die.data_valid || sense_end_[d] != kNever || die.output_valid) return;
  die.output_valid = true;
  die.out_first = die.data_first;
  die.out_count = die.data_count;
  die.out_next = 0;
  if (config_.cache_read) die.data_valid = false;
  for (size_t i = 0; i < die.out_count; ++i) fifo_.push_back(d);
}

bool PipelineSchedule::repeat_last_run(unsigned channel, const Start& start) {
  if (last_channel_ == kNoRun || !(start == last_start_)) return false;
  const unsigned D = config_.dies_per_channel;
  int64_t shift = 0;
  bool first = true;
  for (unsigned d = 0; d < D; ++d) {
    const std::vector<Queued>& now = queues_[size_t(channel) * D + d];
    const std::vector<Queued>& was = queues_[size_t(last_channel_) * D + d];
    if (now.size() != was.size()) return false;
    for (size_t k = 0; k < now.size(); ++k) {
      const int64_t moved = int64_t(now[k].index) - int64_t(was[k].index);
      if (first) {
        shift = moved;
        first = false;
      }
      if (moved != shift || now[k].plane != was[k].plane) return false;
      if (start.page_ps != nullptr && start.page_ps[now[k].index] != start.page_ps[was[k].index]) return false;
    }
  }
  // The same schedule: only the pages' places differ (the dies' counts and last data-outs are equal).
  for (Page& page : out_) page.index = uint32_t(int64_t(page.index) + shift);
  last_channel_ = channel;
  ++repeated_runs_;
  return true;
}

// A new run's state: the channel's die queues, every die sensing its first
// group when ready. Returns the channel's page count.
size_t PipelineSchedule::begin_run(unsigned channel) {
  const unsigned D = config_.dies_per_channel;
  std::swap(last_start_, next_start_);
  last_channel_ = channel;
  size_t total = 0;
  sense_end_.assign(D, kNever);
  for (unsigned d = 0; d < D; ++d) {
    dies_[d] = Die{};
    dies_[d].queue = &queues_[size_t(channel) * D + d];
    total += dies_[d].queue->size();
  }
  // Written in place, not pushed: a page pushed from the stack is read back
  // whole just after its fields were stored, a stall on every page.
  out_.resize(total);
  fifo_.clear();
  fifo_head_ = 0;
  senses_.assign(D, 0);
  pages_by_die_.assign(D, 0);
  for (unsigned d = 0; d < D; ++d) pages_by_die_[d] = dies_[d].queue->size();
  last_out_.assign(D, 0);
  for (unsigned d = 0; d < D; ++d) start_sense(dies_[d], d, last_start_.die_ready_ps[d]);
  return total;
}

void PipelineSchedule::run(unsigned channel, uint64_t start_ps, unsigned buffers, const uint64_t* page_ps,
                           uint64_t consumer_from_ps, const uint64_t* die_ready_ps, uint64_t channel_free_ps) {
  if (!assigned_) throw std::logic_error("PipelineSchedule::run() before assign()");
  const unsigned D = config_.dies_per_channel;
  Start& start = next_start_;
  start.start_ps = start_ps;
  start.consumer_from_ps = consumer_from_ps;
  start.channel_free_ps = channel_free_ps;
  start.buffers = buffers;
  start.page_ps = buffers > 0 ? page_ps : nullptr;
  start.die_ready_ps.resize(D);
  for (unsigned d = 0; d < D; ++d) start.die_ready_ps[d] = die_ready_ps ? std::max(start_ps, die_ready_ps[d]) : start_ps;
  if (repeat_last_run(channel, start)) return;
  const size_t total = begin_run(channel);
  size_t arrived = 0;

  // A page's bus time, its read's command and status cycles included (nand::Channel).
  const uint64_t t_out = config_.data_out_ps(false), t_out_first = config_.data_out_ps(true);
  const bool cache_read = config_.cache_read;
  uint64_t now = start_ps;
  bool busy = false;
  uint64_t transfer_end = 0;
  unsigned transfer_die = 0;
  uint64_t consumer_busy = consumer_from_ps;
  while (arrived < total) {
    uint64_t t_sense = kNever;
    unsigned sense_die = 0;
    for (unsigned d = 0; d < D; ++d) {
      if (sense_end_[d] < t_sense) {
        t_sense = sense_end_[d];
        sense_die = d;
      }
    }
    const uint64_t t_transfer = busy ? transfer_end : kNever;
    uint64_t t_grant = kNever;
    if (!busy && fifo_head_ < fifo_.size()) {
      // The next data-out (number `arrived`) needs the buffer of page arrived - buffers.
      t_grant = buffers == 0 || arrived < buffers ? now : std::max(now, out_[arrived - buffers].done_ps);
      t_grant = std::max(t_grant, channel_free_ps);
    }
    if (t_sense <= t_transfer && t_sense <= t_grant) {
      now = t_sense;
      Die& die = dies_[sense_die];
      sense_end_[sense_die] = kNever;
      move_to_output(die, sense_die);
      if (!die.data_valid) start_sense(die, sense_die, now);
    } else if (t_transfer <= t_grant) {
      now = t_transfer;
      busy = false;
      Die& die = dies_[transfer_die];
      const uint32_t index = (*die.queue)[die.out_first + die.out_next].index;
      last_out_[transfer_die] = now;
      if (++die.out_next == die.out_count) {
        die.output_valid = false;
        if (!cache_read) die.data_valid = false;
        move_to_output(die, transfer_die);
        if (!die.data_valid && sense_end_[transfer_die] == kNever) start_sense(die, transfer_die, now);
      }
      Page& page = out_[arrived++];
      page.index = index;
      page.arrival_ps = now;
      page.done_ps = now;
      if (buffers > 0) {
        page.done_ps = std::max(now, consumer_busy) + (page_ps != nullptr ? page_ps[index] : 0);
        consumer_busy = page.done_ps;
      }
    } else {
      now = t_grant;
      transfer_die = fifo_[fifo_head_++];
      busy = true;
      transfer_end = now + (dies_[transfer_die].out_next == 0 ? t_out_first : t_out);
    }
  }
}

}  // namespace ispsim::nand
