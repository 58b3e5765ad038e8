// The provenance every machine output of the CLI carries (result_schema.h):
// this build's version, the command line, the trace's SHA-1 and generator seed,
// and each run's resolved platform configuration (schema::configuration_text).
#pragma once

#include <string>

#include "platforms/systems/result_schema.h"
#include "schema/platform_loader.h"

namespace ispsim::cli {

// Remembers argv (main() calls it once) for command_line().
void set_command_line(int argc, char** argv);
// "ispsim run -p memllm ...": argv joined, each argument shell-quoted when needed.
const std::string& command_line();

// The provenance of results made from `trace_path` (empty: no trace).
systems::Provenance provenance(const std::string& trace_path);

// What a run's statistics file records of how it was made (RunOptions::stats_provenance).
inline systems::StatsProvenance stats_provenance(const systems::Provenance& p, const std::string& configuration) {
  return {p, configuration};
}

}  // namespace ispsim::cli
