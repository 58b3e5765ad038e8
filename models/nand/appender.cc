#include "models/nand/appender.h"

#include <stdexcept>

#include "common/error.h"

namespace ispsim::nand {

Appender::Appender(sc_core::sc_module_name name, FlashArray& flash)
    : sc_core::sc_module(name), flash_(flash), stats_(this->name()) {
  flash_.add_client(*this, /*background=*/true);
  const uint64_t page_bytes = flash_.config().page_bytes;
  stats_.formula_integer("bytes_programmed", "bytes", "bytes appended (whole pages)",
                         [this, page_bytes] { return total_programmed_.value() * page_bytes; });
  stats_.formula("append_time", "ns", "time from start() to the last page programmed, summed over batches",
                 [this] { return batch_ps_ * 1e-3; });
  stats_.formula("bandwidth", "GB/s", "bytes programmed / append time, GB = 1e9 B", [this, page_bytes] {
    return batch_ps_ > 0 ? double(total_programmed_.value() * page_bytes) / (batch_ps_ * 1e-12) / 1e9 : 0.0;
  });
}

void Appender::start(std::vector<PageAddress> pages, const std::string& where, bool garbage_collection) {
  if (active_) throw std::logic_error(std::string(name()) + ": start() while a batch is under way");
  if (pages.size() >= UINT32_MAX) throw BadInput(where, "more than 2^32 - 1 pages in one batch");
  const FlashConfig& fc = flash_.config();
  for (size_t i = 0; i < pages.size(); ++i) flash_.check_address(pages[i], where, i);
  pages_ = std::move(pages);
  garbage_collection_ = garbage_collection;
  programmed_ = 0;
  started_at_ = finished_at_ = sc_core::sc_time_stamp();

  const size_t dies = fc.dies();
  auto die_of = [&](const PageAddress& p) { return size_t(p.channel) * fc.dies_per_channel + p.die; };
  begin_.assign(dies + 1, 0);
  for (const PageAddress& p : pages_) ++begin_[die_of(p) + 1];
  for (size_t d = 0; d < dies; ++d) begin_[d + 1] += begin_[d];
  next_.assign(begin_.begin(), begin_.end() - 1);
  order_.resize(pages_.size());
  for (uint32_t i = 0; i < pages_.size(); ++i) order_[next_[die_of(pages_[i])]++] = i;
  next_.assign(begin_.begin(), begin_.end() - 1);

  if (pages_.empty()) {
    done_event_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  active_ = true;
  for (unsigned c = 0; c < fc.channels; ++c) {
    for (unsigned d = 0; d < fc.dies_per_channel; ++d) issue(flash_.die(c, d));
  }
}

bool Appender::all_issued() const {
  if (!active_) return true;
  for (size_t q = 0; q + 1 < begin_.size(); ++q)
    if (next_[q] != begin_[q + 1]) return false;
  return true;
}

void Appender::issue(Die& die) {
  const size_t q = size_t(die.channel_index()) * flash_.config().dies_per_channel + die.index();
  if (next_[q] == begin_[q + 1] || !die.can_program()) return;
  const uint32_t index = order_[next_[q]++];
  die.program(pages_[index], index, *this);
}

void Appender::on_die_idle(Die& die) {
  if (active_) issue(die);
}

void Appender::on_page_programmed(const PageAddress& page, uint32_t tag) {
  ++programmed_;
  ++total_programmed_;
  if (programmed_ == pages_.size()) {
    active_ = false;
    finished_at_ = sc_core::sc_time_stamp();
    batch_ps_ += (finished_at_ - started_at_).value();
    done_event_.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace ispsim::nand
