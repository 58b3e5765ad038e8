// Reads a list of pages for a conventional host read and reports each page the
// moment its data-out over the channel ends (the page is at the controller), so
// the controller can forward it to the host at once.
//
// Schedule: MemLLM's die-level pipeline (the same as nand::StreamReader in
// PIPELINED mode): every die senses its next pages (up to planes_per_die pages
// of distinct planes per multi-plane read) as soon as it can read again, and
// data-outs share the channel first come, first served. Unlike the ISP's
// stream, there is no per-channel scratchpad to wait for: the controller's read
// buffer is assumed large enough for every page in flight (stated simplification;
// a host interface slower than the flash then only delays the host's data, never
// the flash).
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <vector>

#include "models/nand/flash_array.h"
#include "models/nand/page_queues.h"

namespace ispsim::ssd {

class HostReader : public sc_core::sc_module, public nand::FlashClient {
 public:
  // `index` is the page's place in the list; called at the end of its data-out.
  using Arrived = std::function<void(uint32_t index)>;
  using Done = std::function<void()>;

  HostReader(sc_core::sc_module_name name, nand::FlashArray& flash);

  // Starts reading `pages` now; `all_arrived` runs after the last page's Arrived
  // (at once for an empty list). One list at a time (std::logic_error otherwise).
  // Addresses outside the flash throw BadInput(where, ...).
  void start(std::vector<nand::PageAddress> pages, Arrived arrived, Done all_arrived,
             const std::string& where = "host read");
  bool active() const { return active_; }
  // Its reads are garbage collection's (the SSD's GC reader): reads that wait for them count in gc_read_wait.
  void set_garbage_collection(bool on) { garbage_collection_ = on; }
  uint64_t pages_read() const { return total_pages_; }

  // nand::FlashClient
  void on_die_idle(nand::Die& die) override;
  void on_page_read(const nand::PageAddress& page, uint32_t tag) override;
  bool garbage_collection() const override { return garbage_collection_; }

 private:
  void issue(nand::Die& die);

  nand::FlashArray& flash_;
  std::vector<nand::PageAddress> pages_;
  nand::PageQueues queues_;  // page indices by die, list order kept
  Arrived arrived_;
  Done all_arrived_;
  uint64_t arrived_count_ = 0;
  bool active_ = false;
  bool garbage_collection_ = false;
  uint64_t total_pages_ = 0;
};

}  // namespace ispsim::ssd
