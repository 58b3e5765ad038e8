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

  // Page indices by die, list order kept.
  queues_.build(pages_, fc.dies(),
                [&](const nand::PageAddress& p) { return size_t(p.channel) * fc.dies_per_channel + p.die; });

  active_ = true;
  for (unsigned c = 0; c < fc.channels; ++c) {
    for (unsigned d = 0; d < fc.dies_per_channel; ++d) issue(flash_.die(c, d));
  }
}

void HostReader::issue(nand::Die& die) {
  const nand::FlashConfig& fc = flash_.config();
  const size_t q = size_t(die.channel_index()) * fc.dies_per_channel + die.index();
  if (queues_.empty(q)) return;
  if (!die.can_read()) return die.request_read();  // a program may be suspended for it
  // A multi-plane read takes this die's next pages while their planes differ.
  const uint32_t* first = nullptr;
  const unsigned count = queues_.take_multi_plane(q, pages_, fc.planes_per_die, &first);
  die.read(pages_.data(), first, count, *this);
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
    std::vector<nand::PageAddress>().swap(pages_);  // no die reads from it now; a GC chunk can be millions of pages
    if (all_arrived_) all_arrived_();
  }
}

}  // namespace ispsim::ssd
