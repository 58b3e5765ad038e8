#include "models/ssd/host_reader.h"

#include <stdexcept>

#include "common/error.h"

namespace ispsim::ssd {

HostReader::HostReader(sc_core::sc_module_name name, nand::FlashArray& flash)
    : sc_core::sc_module(name), flash_(flash) {
  flash_.add_client(*this);
}

void HostReader::start(std::vector<nand::PageAddress> pages, Arrived arrived, Done all_arrived,
                       const std::string& where) {
  if (active_) throw std::logic_error(std::string(name()) + ": start() while a read is under way");
  if (pages.size() >= UINT32_MAX) throw BadInput(where, "more than 2^32 - 1 pages in one read");
  for (size_t i = 0; i < pages.size(); ++i) flash_.check_address(pages[i], where, i);
  const nand::FlashConfig& fc = flash_.config();
  pages_ = std::move(pages);
  arrived_ = std::move(arrived);
  all_arrived_ = std::move(all_arrived);
  arrived_count_ = 0;
  if (pages_.empty()) {
    if (all_arrived_) all_arrived_();
    return;
  }

  // Bucket by die (counting sort), keeping list order within a die.
  const size_t dies = fc.dies();
  auto die_of = [&](const nand::PageAddress& p) { return size_t(p.channel) * fc.dies_per_channel + p.die; };
  begin_.assign(dies + 1, 0);
  for (const nand::PageAddress& p : pages_) ++begin_[die_of(p) + 1];
  for (size_t d = 0; d < dies; ++d) begin_[d + 1] += begin_[d];
  next_.assign(begin_.begin(), begin_.end() - 1);
  order_.resize(pages_.size());
  for (uint32_t i = 0; i < pages_.size(); ++i) order_[next_[die_of(pages_[i])]++] = i;
  next_.assign(begin_.begin(), begin_.end() - 1);

  active_ = true;
  for (unsigned c = 0; c < fc.channels; ++c) {
    for (unsigned d = 0; d < fc.dies_per_channel; ++d) issue(flash_.die(c, d));
  }
}

void HostReader::issue(nand::Die& die) {
  const nand::FlashConfig& fc = flash_.config();
  const size_t q = size_t(die.channel_index()) * fc.dies_per_channel + die.index();
  if (next_[q] == begin_[q + 1] || !die.can_read()) return;
  // A multi-plane read takes this die's next pages while their planes differ.
  const uint32_t first = next_[q];
  unsigned count = 0;
  unsigned planes_used = 0;
  while (count < fc.planes_per_die && next_[q] < begin_[q + 1]) {
    const unsigned bit = 1u << pages_[order_[next_[q]]].plane;
    if (planes_used & bit) break;
    planes_used |= bit;
    ++count;
    ++next_[q];
  }
  die.read(pages_.data(), &order_[first], count, *this);
}

void HostReader::on_die_idle(nand::Die& die) {
  if (active_) issue(die);
}

void HostReader::on_page_read(const nand::PageAddress& page, uint32_t tag) {
  ++total_pages_;
  ++arrived_count_;
  if (arrived_) arrived_(tag);
  if (arrived_count_ == pages_.size()) {
    active_ = false;
    if (all_arrived_) all_arrived_();
  }
}

}  // namespace ispsim::ssd
