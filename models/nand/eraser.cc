#include "models/nand/eraser.h"

#include <stdexcept>

namespace ispsim::nand {

Eraser::Eraser(sc_core::sc_module_name name, FlashArray& flash) : sc_core::sc_module(name), flash_(flash) {
  flash_.add_client(*this, /*background=*/true);
}

void Eraser::start(std::vector<PageAddress> blocks, const sc_core::sc_time& t_bers, const std::string& where) {
  if (active_) throw std::logic_error(std::string(name()) + ": start() while a batch is under way");
  const FlashConfig& fc = flash_.config();
  for (size_t i = 0; i < blocks.size(); ++i) flash_.check_address(blocks[i], where, i);
  blocks_ = std::move(blocks);
  t_bers_ = t_bers;
  erased_ = 0;
  queued_.assign(fc.dies(), {});
  for (uint32_t i = uint32_t(blocks_.size()); i-- > 0;)
    queued_[size_t(blocks_[i].channel) * fc.dies_per_channel + blocks_[i].die].push_back(i);
  if (blocks_.empty()) {
    finished_at_ = sc_core::sc_time_stamp();
    done_event_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  active_ = true;
  for (unsigned c = 0; c < fc.channels; ++c)
    for (unsigned d = 0; d < fc.dies_per_channel; ++d) issue(flash_.die(c, d));
}

void Eraser::issue(Die& die) {
  std::vector<uint32_t>& queue = queued_[size_t(die.channel_index()) * flash_.config().dies_per_channel + die.index()];
  if (queue.empty() || !die.can_program()) return;
  const uint32_t index = queue.back();
  queue.pop_back();
  die.erase(blocks_[index], index, *this, t_bers_);
}

void Eraser::on_die_idle(Die& die) {
  if (active_) issue(die);
}

void Eraser::on_block_erased(const PageAddress&, uint32_t) {
  if (++erased_ < blocks_.size()) return;
  active_ = false;
  finished_at_ = sc_core::sc_time_stamp();
  done_event_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace ispsim::nand
