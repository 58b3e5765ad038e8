// Block erases on the dies (garbage collection's last step): each block is
// erased for tBERS on its die (Die::erase), dies in parallel, a die taking its
// next erase when it can take a program. Erases are background work: readers
// hear on_die_idle first and suspend an erase under way (see die.h). One batch
// at a time.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "models/nand/flash_array.h"

namespace ispsim::nand {

class Eraser : public sc_core::sc_module, public FlashClient {
 public:
  Eraser(sc_core::sc_module_name name, FlashArray& flash);

  // Starts erasing `blocks` (one address per erase; its page is ignored) for
  // `t_bers` each. BadInput for an address outside the flash.
  void start(std::vector<PageAddress> blocks, const sc_core::sc_time& t_bers, const std::string& where = "erase");
  bool done() const { return erased_ == blocks_.size(); }
  const sc_core::sc_event& done_event() const { return done_event_; }
  sc_core::sc_time finished_at() const { return finished_at_; }

  // FlashClient
  void on_die_idle(Die& die) override;
  void on_block_erased(const PageAddress& block, uint32_t tag) override;

 private:
  void issue(Die& die);

  FlashArray& flash_;
  std::vector<PageAddress> blocks_;
  std::vector<std::vector<uint32_t>> queued_;  // per die: indices into blocks_ not yet issued, last first
  sc_core::sc_time t_bers_;
  uint64_t erased_ = 0;
  bool active_ = false;
  sc_core::sc_time finished_at_;
  sc_core::sc_event done_event_;
};

}  // namespace ispsim::nand
