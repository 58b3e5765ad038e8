#include "models/nand/flash_array.h"

#include "common/error.h"

namespace ispsim::nand {

FlashArray::FlashArray(sc_core::sc_module_name name, const FlashConfig& config)
    : sc_core::sc_module(name), config_(config) {
  for (unsigned c = 0; c < config_.channels; ++c) {
    const std::string channel_name = "ch" + std::to_string(c);
    channels_.push_back(std::make_unique<Channel>(channel_name.c_str(), config_, c));
  }
}

void FlashArray::add_client(FlashClient& client, bool background) {
  for (auto& channel : channels_) {
    for (unsigned d = 0; d < channel->die_count(); ++d) channel->die(d).add_client(client, background);
  }
}

void FlashArray::check_address(const PageAddress& p, const std::string& where, uint64_t index) const {
  auto fail = [&](const char* what, uint32_t value, uint32_t limit) {
    throw BadInput(where + ": page " + std::to_string(index), std::string(what) + " " + std::to_string(value) + " does not exist (" +
                              std::to_string(limit) + " " + what + "s)");
  };
  if (p.channel >= config_.channels) fail("channel", p.channel, config_.channels);
  if (p.die >= config_.dies_per_channel) fail("die", p.die, config_.dies_per_channel);
  if (p.plane >= config_.planes_per_die) fail("plane", p.plane, config_.planes_per_die);
  if (p.block >= config_.blocks_per_plane) fail("block", p.block, config_.blocks_per_plane);
  if (p.page >= config_.pages_per_block) fail("page", p.page, config_.pages_per_block);
}

void FlashArray::trace(vcd::Writer& writer) {
  for (auto& channel : channels_) channel->trace(writer);
}

}  // namespace ispsim::nand
