#include "models/nand/layout.h"

#include "common/error.h"

namespace ispsim::nand {

Layout::Layout(const FlashConfig& config)
    : channels_(config.channels),
      dies_(config.dies_per_channel),
      planes_(config.planes_per_die),
      pages_per_block_(config.pages_per_block),
      capacity_(config.total_pages()) {}

PageAddress Layout::address(uint64_t i, const std::string& where) const {
  if (i >= capacity_) {
    throw BadInput(where, "page " + std::to_string(i) + " is beyond the flash capacity of " +
                              std::to_string(capacity_) + " pages");
  }
  return unchecked(i);
}

PageAddress Layout::unchecked(uint64_t i) const {
  PageAddress a;
  a.channel = uint32_t(i % channels_);
  a.die = uint32_t((i / channels_) % dies_);
  a.plane = uint32_t((i / (channels_ * dies_)) % planes_);
  const uint64_t n = i / (channels_ * dies_ * planes_);
  a.block = uint32_t(n / pages_per_block_);
  a.page = uint32_t(n % pages_per_block_);
  return a;
}

}  // namespace ispsim::nand
