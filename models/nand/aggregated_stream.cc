#include "models/nand/aggregated_stream.h"

namespace ispsim::nand {

void FlashStart::set_relative(FlashArray& flash, const std::vector<uint64_t>& die_ready, uint64_t start_ps) {
  auto relative = [&](uint64_t t) { return t > start_ps ? t - start_ps : 0; };
  die_ready_ps.clear();
  for (uint64_t t : die_ready) die_ready_ps.push_back(relative(t));
  channel_free_ps.clear();
  for (unsigned c = 0; c < flash.config().channels; ++c)
    channel_free_ps.push_back(relative(flash.channel(c).data_ins_end_ps(start_ps)));
}

void DieUse::assign(size_t dies) {
  pages.assign(dies, 0);
  senses.assign(dies, 0);
  last_out_ps.assign(dies, 0);
}

void DieUse::take(const PipelineSchedule& schedule, unsigned channel, uint64_t start_ps) {
  const size_t dies = schedule.pages_by_die().size();
  for (size_t d = 0; d < dies; ++d) {
    const size_t die = channel * dies + d;
    pages[die] = schedule.pages_by_die()[d];
    senses[die] = schedule.senses_by_die()[d];
    if (pages[die] > 0) last_out_ps[die] = schedule.last_out_by_die()[d] - start_ps;
  }
}

}  // namespace ispsim::nand
