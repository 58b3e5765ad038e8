#include "models/nand/flash_array.h"

#include <algorithm>

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

bool FlashArray::quiet() const {
  for (const auto& channel : channels_) {
    if (!channel->quiet()) return false;
    for (unsigned d = 0; d < channel->die_count(); ++d)
      if (!channel->die(d).quiet()) return false;
  }
  return true;
}

bool FlashArray::quiet_but_programs() const {
  for (const auto& channel : channels_) {
    if (!channel->only_data_ins()) return false;
    for (unsigned d = 0; d < channel->die_count(); ++d) {
      const Die& die = channel->die(d);
      if (!die.quiet() && !die.only_programming() && !die.awaiting_data_in()) return false;
    }
  }
  return true;
}

void FlashArray::account_aggregated_reads(unsigned channel, const std::vector<uint64_t>& pages_by_die,
                                          const std::vector<uint64_t>& senses_by_die) {
  Channel& ch = *channels_.at(channel);
  uint64_t pages = 0, senses = 0;
  for (unsigned d = 0; d < ch.die_count() && d < pages_by_die.size(); ++d) {
    ch.die(d).account_aggregated_reads(pages_by_die[d], senses_by_die.at(d));
    pages += pages_by_die[d];
    senses += senses_by_die.at(d);
  }
  ch.account_aggregated_transfers(pages, senses);
}

uint64_t FlashArray::claim_for_stream(unsigned channel, unsigned die, uint64_t now_ps) {
  channels_.at(channel)->bar_programs();
  return this->die(channel, die).suspend_for_stream(now_ps);
}

void FlashArray::end_aggregated_stream(const std::vector<uint64_t>& pages, const std::vector<uint64_t>& senses,
                                       const std::vector<uint64_t>& last_out_ps, uint64_t base_ps) {
  const unsigned dies = config_.dies_per_channel;
  std::vector<uint64_t> channel_pages(dies), channel_senses(dies);
  for (unsigned c = 0; c < config_.channels; ++c) {
    bool read_here = false;
    uint64_t channel_last_out_ps = 0;
    for (unsigned d = 0; d < dies; ++d) {
      const size_t die = size_t(c) * dies + d;
      channel_pages[d] = pages.at(die);
      channel_senses[d] = senses.at(die);
      if (channel_pages[d] == 0) continue;
      read_here = true;
      this->die(c, d).resume_after_stream(base_ps + last_out_ps.at(die));
      channel_last_out_ps = std::max(channel_last_out_ps, base_ps + last_out_ps.at(die));
    }
    // Only the channels this stream read (claim_for_stream barred them): a bar
    // is not counted, so another stream's channel keeps that stream's release.
    if (read_here) channels_[c]->release_programs_at(channel_last_out_ps);
    account_aggregated_reads(c, channel_pages, channel_senses);
  }
}

void FlashArray::trace(vcd::Writer& writer) {
  for (auto& channel : channels_) channel->trace(writer);
}

}  // namespace ispsim::nand
