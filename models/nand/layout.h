// Placement of KV tiles on the flash (MemLLM Sec. V-C, SPEC section 3): tiles
// are page-aligned (one tile = one page) and consecutive tiles are interleaved
// across channels first, then striped across the dies of each channel, then the
// planes of each die, then the pages and blocks:
//
//   tile i -> channel  i mod C
//             die      (i / C) mod D
//             plane    (i / (C*D)) mod P
//             n = i / (C*D*P): block n / pages_per_block, page n mod pages_per_block
//
// so any C consecutive tiles use every channel once and any C*D use every die
// once, which is what both the channel-parallel tiling and the die-level
// pipeline need.
#pragma once

#include <cstdint>
#include <string>

#include "models/nand/flash_config.h"
#include "models/nand/page_address.h"

namespace ispsim::nand {

class Layout {
 public:
  explicit Layout(const FlashConfig& config);

  // Address of tile (linear page index) `i`; throws BadInput(where, ...) past the capacity.
  PageAddress address(uint64_t i, const std::string& where = "layout") const;
  // Turns the address of tile i into that of tile i + 1 (address(i + 1),
  // without its divisions); the caller checks i + 1 against the capacity.
  void next(PageAddress& a) const {
    if (++a.channel < channels_) return;
    a.channel = 0;
    if (++a.die < dies_) return;
    a.die = 0;
    if (++a.plane < planes_) return;
    a.plane = 0;
    if (++a.page < pages_per_block_) return;
    a.page = 0;
    ++a.block;
  }
  uint64_t capacity_pages() const { return capacity_; }
  // The linear page index of an address (address(index_of(a)) == a).
  uint64_t index_of(const PageAddress& a) const {
    return ((((uint64_t(a.block) * pages_per_block_ + a.page) * planes_ + a.plane) * dies_ + a.die) * channels_) +
           a.channel;
  }
  // The address `count` pages on in the layout order, as `count` next() calls
  // would give it (no capacity check).
  PageAddress advanced(const PageAddress& a, uint64_t count) const { return unchecked(index_of(a) + count); }

 private:
  PageAddress unchecked(uint64_t i) const;
  uint64_t channels_, dies_, planes_, pages_per_block_, capacity_;
};

}  // namespace ispsim::nand
