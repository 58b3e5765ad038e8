// The flash's part of an event-free ("aggregated") stream, shared by the
// attention engine's passes and the SSD's host reads: what its outcome depends
// on at the flash (FlashStart, a part of their memo keys) and what it leaves on
// the dies (DieUse, a part of their outcomes), both relative to the stream's
// start, so that a repeated stream takes a recent one's outcome shifted in time.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "models/nand/flash_array.h"
#include "models/nand/pipeline_schedule.h"

namespace ispsim::nand {

// When each die may sense (by channel x die) and each channel takes data-outs,
// relative to the stream's start (a die or channel free before it counts as free at it).
struct FlashStart {
  std::vector<uint64_t> die_ready_ps;
  std::vector<uint64_t> channel_free_ps;
  // Each die's ready time and each channel's queued data-ins' end, relative to
  // `start_ps` (0: by then); the vectors keep their storage.
  void set_relative(FlashArray& flash, const std::vector<uint64_t>& die_ready, uint64_t start_ps);
  bool operator==(const FlashStart& o) const {
    return std::tie(die_ready_ps, channel_free_ps) == std::tie(o.die_ready_ps, o.channel_free_ps);
  }
};

// Pages, multi-plane senses and the last page out of each die (by channel x
// die), the last relative to the stream's start (for dies with pages).
struct DieUse {
  std::vector<uint64_t> pages, senses, last_out_ps;
  void assign(size_t dies);
  // The schedule's last run, of `channel`.
  void take(const PipelineSchedule& schedule, unsigned channel, uint64_t start_ps);
  // The stream's end on the flash (FlashArray::end_aggregated_stream).
  void end_stream(FlashArray& flash, uint64_t start_ps) const {
    flash.end_aggregated_stream(pages, senses, last_out_ps, start_ps);
  }
};

}  // namespace ispsim::nand
