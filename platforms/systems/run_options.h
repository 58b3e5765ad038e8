// What `ispsim run` asks of a simulation, independent of the system simulated.
#pragma once

#include <string>

#include "models/core/vcd.h"

namespace ispsim::systems {

struct ProgressSlot;  // progress.h

struct RunOptions {
  std::string stats_path;  // .json or .csv; empty = none
  vcd::Options waveform;   // waveform.path empty = no waveform
  std::string timeline_path;  // Chrome trace-event JSON; empty = none
  bool progress = false;      // a progress line on stderr, when it is a terminal
  ProgressSlot* progress_slot = nullptr;  // receives the ops completed (compare's children); none if null
};

}  // namespace ispsim::systems
