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
  snapshots_taken_ = 0;
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
  const size_t interval = snapshot_interval();
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
      if (period_advance_ && arrived % interval == 0 && arrived < total) {
        Cursor cursor{arrived, now, consumer_busy};
        if (advance_period(cursor)) {
          arrived = cursor.arrived;
          now = cursor.now;
          consumer_busy = cursor.consumer_busy;
        }
      }
    } else {
      now = t_grant;
      transfer_die = fifo_[fifo_head_++];
      busy = true;
      transfer_end = now + (dies_[transfer_die].out_next == 0 ? t_out_first : t_out);
    }
  }
}

bool PipelineSchedule::advance_period(Cursor& cursor) {
  // Before then, the buffers' first pages or the channel's data-ins decide by
  // the time itself, not by the time from now.
  if (cursor.arrived < last_start_.buffers || cursor.now < last_start_.channel_free_ps) return false;
  Snapshot& now = snapshots_[snapshots_taken_ % kSnapshots];
  take_snapshot(cursor, now);
  ++snapshots_taken_;
  const size_t earlier = std::min(snapshots_taken_, kSnapshots) - 1;
  for (size_t back = 1; back <= earlier; ++back) {
    const Snapshot& was = snapshots_[(snapshots_taken_ - 1 - back) % kSnapshots];
    if (was.state != now.state) continue;
    int64_t list_shift = 0;
    const size_t periods = repeating_periods(was, now, &list_shift);
    if (periods == 0) return false;
    repeat_periods(was, now, periods, list_shift, cursor);
    snapshots_taken_ = 0;
    return true;
  }
  return false;
}

void PipelineSchedule::take_snapshot(const Cursor& cursor, Snapshot& snapshot) const {
  const unsigned D = config_.dies_per_channel;
  snapshot.arrived = cursor.arrived;
  snapshot.now = cursor.now;
  snapshot.next.resize(D);
  snapshot.first_needed.resize(D);
  snapshot.senses = senses_;
  snapshot.last_out = last_out_;
  std::vector<uint64_t>& state = snapshot.state;
  state.clear();
  // A time still ahead, from now; one past acts as now.
  auto ahead = [&](uint64_t t) { return t == kNever ? kNever : t > cursor.now ? t - cursor.now : 0; };
  for (unsigned d = 0; d < D; ++d) {
    const Die& die = dies_[d];
    snapshot.next[d] = die.next;
    size_t first = die.next;
    // A register's stale fields are never read again: left out.
    state.push_back(die.data_valid);
    if (die.data_valid) {
      state.push_back(die.next - die.data_first);
      state.push_back(die.data_count);
      first = std::min(first, die.data_first);
    }
    state.push_back(die.output_valid);
    if (die.output_valid) {
      state.push_back(die.next - die.out_first);
      state.push_back(die.out_count);
      state.push_back(die.out_next);
      first = std::min(first, die.out_first + die.out_next);
    }
    state.push_back(ahead(sense_end_[d]));
    snapshot.first_needed[d] = first;
  }
  state.push_back(fifo_.size() - fifo_head_);
  state.insert(state.end(), fifo_.begin() + std::ptrdiff_t(fifo_head_), fifo_.end());
  state.push_back(ahead(cursor.consumer_busy));
  for (size_t k = cursor.arrived - last_start_.buffers; k < cursor.arrived; ++k) state.push_back(ahead(out_[k].done_ps));
}

// A period reads each die's pages from its first not yet out (at `was`) to
// the one after its last sensed (at `now`); the next period reads those one
// period on, and so on. Each page checked against the page a period before it.
size_t PipelineSchedule::repeating_periods(const Snapshot& was, const Snapshot& now, int64_t* list_shift) {
  const unsigned D = config_.dies_per_channel;
  bool shift_known = false;
  checked_to_.assign(D, 0);
  for (unsigned d = 0; d < D; ++d) {
    const std::vector<Queued>& queue = *dies_[d].queue;
    const size_t period = now.next[d] - was.next[d];
    if (period == 0) {  // a die without pages left is done; any other must move on
      if (now.first_needed[d] != queue.size()) return 0;
      continue;
    }
    const size_t from = was.first_needed[d] + period;
    if (from >= queue.size()) return 0;
    const int64_t shift = int64_t(queue[from].index) - int64_t(queue[from - period].index);
    if (shift_known && shift != *list_shift) return 0;
    *list_shift = shift;
    shift_known = true;
    checked_to_[d] = from;
  }
  for (size_t periods = 0;; ++periods) {
    for (unsigned d = 0; d < D; ++d) {
      const std::vector<Queued>& queue = *dies_[d].queue;
      const size_t period = now.next[d] - was.next[d];
      if (period == 0) continue;
      const size_t last = now.next[d] + (periods + 1) * period;  // the next period's last page read
      if (last >= queue.size()) return periods;
      for (size_t& at = checked_to_[d]; at <= last; ++at)
        if (!same_page_shifted(queue, at, period, *list_shift)) return periods;
    }
  }
}

bool PipelineSchedule::same_page_shifted(const std::vector<Queued>& queue, size_t at, size_t period,
                                         int64_t list_shift) const {
  const Queued& page = queue[at];
  const Queued& before = queue[at - period];
  if (int64_t(page.index) - int64_t(before.index) != list_shift || page.plane != before.plane) return false;
  const uint64_t* page_ps = last_start_.page_ps;
  return page_ps == nullptr || page_ps[page.index] == page_ps[before.index];
}

// The pages of `periods` periods more, each the one before shifted, and the
// state `periods` periods on.
void PipelineSchedule::repeat_periods(const Snapshot& was, const Snapshot& now, size_t periods, int64_t list_shift,
                                      Cursor& cursor) {
  const size_t period_pages = now.arrived - was.arrived;
  const uint64_t period_ps = now.now - was.now;
  const size_t pages = periods * period_pages;
  for (size_t k = now.arrived; k < now.arrived + pages; ++k) {
    const Page& before = out_[k - period_pages];
    Page& page = out_[k];
    page.index = uint32_t(int64_t(before.index) + list_shift);
    page.arrival_ps = before.arrival_ps + period_ps;
    page.done_ps = before.done_ps + period_ps;
  }
  const uint64_t moved_ps = periods * period_ps;
  for (unsigned d = 0; d < config_.dies_per_channel; ++d) {
    const size_t moved = periods * (now.next[d] - was.next[d]);
    Die& die = dies_[d];
    die.next += moved;
    die.data_first += moved;
    die.out_first += moved;
    if (sense_end_[d] != kNever) sense_end_[d] += moved_ps;
    senses_[d] += periods * (now.senses[d] - was.senses[d]);
    if (now.last_out[d] != was.last_out[d]) last_out_[d] += moved_ps;
  }
  cursor.arrived += pages;
  cursor.now += moved_ps;
  cursor.consumer_busy = std::max(cursor.consumer_busy, now.now) + moved_ps;
  advanced_pages_ += pages;
}

}  // namespace ispsim::nand
