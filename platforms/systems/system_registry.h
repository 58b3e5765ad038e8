// Which system runs a platform, chosen once from its platform file: `run`,
// `compare` and the sweep runner ask here and then talk only to the entry. A
// new kind of system is its own files plus one line in system_registry.cc.
// (The NAND streaming microbenchmark is not here: it reports text, not a run
// summary.)
#pragma once

#include <string>
#include <vector>

#include "platforms/systems/report.h"
#include "platforms/systems/run_options.h"
#include "schema/platform_loader.h"

namespace ispsim::systems {

struct SystemKind {
  const char* name;                                 // e.g. "llm_inference"
  bool (*runs)(const schema::Platform& platform);  // whether this system runs the platform's program
  RunSummary (*run)(const schema::LoadedPlatform& platform, const std::string& trace_path, const RunOptions& options);
  // BadInput for what the system refuses in the platform itself (before any trace):
  // what `run` checks, and `describe` too, so that it accepts only what runs.
  void (*check)(const schema::LoadedPlatform& platform);
  bool decode_only;  // paper 1's decode systems: their own table and their own ignored settings
};

const std::vector<SystemKind>& system_kinds();
// The system of the platform; BadInput naming the platform file when none runs its program.
const SystemKind& system_for(const schema::LoadedPlatform& platform);
// system_for(platform).run(...).
RunSummary run_system(const schema::LoadedPlatform& platform, const std::string& trace_path, const RunOptions& options);

}  // namespace ispsim::systems
