// The flash of one SSD: `channels` Channel modules ("ch0", "ch1", ...), each with
// its dies ("ch0.die0", ...), built from one FlashConfig.
#pragma once

#include <memory>
#include <systemc>
#include <vector>

#include "models/core/vcd.h"
#include "models/nand/channel.h"
#include "models/nand/flash_config.h"

namespace ispsim::nand {

class FlashArray : public sc_core::sc_module {
 public:
  FlashArray(sc_core::sc_module_name name, const FlashConfig& config);
  // `params` resolved (schema/resolve.h).
  FlashArray(sc_core::sc_module_name name, const schema::NandParams& params)
      : FlashArray(name, FlashConfig::from_params(params)) {}

  const FlashConfig& config() const { return config_; }
  Channel& channel(unsigned c) { return *channels_[c]; }
  Die& die(unsigned channel, unsigned die) { return channels_[channel]->die(die); }
  // Registers `client` with every die (for on_die_idle); `background` clients
  // (programs) hear it after the others (reads first, see die.h).
  void add_client(FlashClient& client, bool background = false);
  // Throws BadInput("<where>: page <index>", ...) if `page` is outside the geometry.
  void check_address(const PageAddress& page, const std::string& where, uint64_t index) const;

  void trace(vcd::Writer& writer);

  // Nothing under way on any die or channel (no read, transfer or program,
  // pending or suspended): the aggregated streaming mode's precondition.
  bool quiet() const;
  // As quiet(), except that dies may be programming (Die::only_programming())
  // or waiting for a program's data-in (Die::awaiting_data_in()), and the
  // channels busy with those data-ins: an aggregated stream suspends those
  // programs (Die::suspend_for_stream()), and its data-outs queue behind the
  // data-ins (Channel::data_ins_end_ps()).
  bool quiet_but_programs() const;
  // Reads of `channel` scheduled without events (nand::PipelineSchedule), counted
  // in the die and channel statistics as if performed (vectors by die).
  void account_aggregated_reads(unsigned channel, const std::vector<uint64_t>& pages_by_die,
                                const std::vector<uint64_t>& senses_by_die);
  // An aggregated stream will read die `die` of `channel`: the die's program
  // under way is suspended (or waited for, Die::suspend_for_stream), and the
  // channel starts no program until the stream's last page on it is out
  // (Channel::bar_programs). Returns when the die may start sensing.
  uint64_t claim_for_stream(unsigned channel, unsigned die, uint64_t now_ps);
  // The end of an aggregated stream on every channel (vectors by channel x
  // die): its reads counted, each die that had pages resumes its program when
  // its last page was out (`base_ps` + last_out_ps), and each channel claimed
  // takes programs again when its last page was out.
  void end_aggregated_stream(const std::vector<uint64_t>& pages, const std::vector<uint64_t>& senses,
                             const std::vector<uint64_t>& last_out_ps, uint64_t base_ps);

 private:
  const FlashConfig config_;
  std::vector<std::unique_ptr<Channel>> channels_;
};

}  // namespace ispsim::nand
