// What `ispsim run` asks of a simulation, independent of the system simulated.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "models/core/vcd.h"
#include "platforms/systems/result_schema.h"

namespace ispsim::systems {

struct ProgressSlot;  // progress.h
struct RunSummary;    // report.h

struct RunOptions {
  std::string stats_path;  // .json or .csv; empty = none
  vcd::Options waveform;   // waveform.path empty = no waveform
  std::string timeline_path;  // Chrome trace-event JSON; empty = none
  std::string drive_state_in;   // the SSD starts from this saved drive state; empty = a fresh drive
  bool precondition = false;    // the SSD's drive is preconditioned first (ftl.precondition_*)
  std::string drive_state_out;  // the drive's state after the run (its KV trimmed); empty = none
  bool progress = false;      // a progress line on stderr, when it is a terminal
  ProgressSlot* progress_slot = nullptr;  // receives the ops completed (compare's children); none if null
  // Called with the summary once the run's output files are written and before
  // they are committed (e.g. `run` prints the table there): when it throws,
  // none of them is committed.
  std::function<void(const RunSummary&)> before_commit;
  // How the run was made, for the statistics file (stats_output.h); none if empty.
  std::optional<StatsProvenance> stats_provenance;
};

}  // namespace ispsim::systems
