// The NAND streaming microbenchmark system: a platform whose program is
// MICROBENCHMARK, run on models/nand's NandStreamSystem. Every kv_load of the
// trace streams its KV tiles from flash into the per-channel consumers, every
// kv_append programs pages out of place; ops run in trace order (see
// models/nand/nand_stream_system.h for the exact semantics).
#pragma once

#include <iosfwd>

#include "schema/platform_loader.h"
#include "platforms/systems/run_options.h"
#include "traces/trace_io.h"

namespace ispsim::systems {

// Reads the ops of the platform's program from `trace`, simulates them and
// writes the requested statistics and waveform. Prints a summary with units to
// `report`. Throws BadInput for a trace this system cannot run; output files
// are written only when the whole run succeeded.
void run_nand_stream(const schema::LoadedPlatform& platform, trace::TraceReader& trace,
                     const RunOptions& options, std::ostream& report);

}  // namespace ispsim::systems
