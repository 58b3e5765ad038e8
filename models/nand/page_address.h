// Physical address of one NAND page, and the interface through which the dies
// and channels report to whoever issued a command (stream reader, appender).
#pragma once

#include <cstdint>

namespace ispsim::nand {

// planes_per_die is at most 16 (nand.proto), so a multi-plane group fits in a
// fixed array and no command allocates memory.
inline constexpr unsigned kMaxPlanes = 16;

struct PageAddress {
  uint32_t channel = 0;
  uint32_t die = 0;  // index of the die on its channel
  uint32_t plane = 0;
  uint32_t block = 0;
  uint32_t page = 0;  // page within the block
};

inline bool operator==(const PageAddress& a, const PageAddress& b) {
  return a.channel == b.channel && a.die == b.die && a.plane == b.plane && a.block == b.block &&
         a.page == b.page;
}
inline bool operator!=(const PageAddress& a, const PageAddress& b) { return !(a == b); }

class Die;

// Callbacks from the flash to the issuer of a command. `tag` is the issuer's
// own number for the page (e.g. its index in the page list). All calls happen
// inside SystemC processes at the simulated time of the event they report.
class FlashClient {
 public:
  virtual ~FlashClient() = default;
  // The die can take a new command (see Die::can_read / Die::can_program).
  virtual void on_die_idle(Die& die) {}
  // Asked by the channel before it starts a data-out for this client: is there
  // room for the page at the destination? Returning false holds the channel
  // until Channel::kick() is called.
  virtual bool may_start_data_out(unsigned channel) { return true; }
  // A data-out towards this client started on `channel` (reserve the room).
  virtual void on_data_out_started(unsigned channel) {}
  // The page's data-out over the channel finished: the page is at the controller.
  virtual void on_page_read(const PageAddress& page, uint32_t tag) {}
  // The page's program (data-in, then tPROG) finished.
  virtual void on_page_programmed(const PageAddress& page, uint32_t tag) {}
  // The block's erase (Die::erase) finished.
  virtual void on_block_erased(const PageAddress& block, uint32_t tag) {}
  // The issuer works for garbage collection: a read that waits for its sense,
  // its data or its program counts as waiting behind GC (Die::gc_read_wait_ps).
  virtual bool garbage_collection() const { return false; }
};

}  // namespace ispsim::nand
